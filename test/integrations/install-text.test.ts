import { existsSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseJsonc } from "../../src/integrations/jsonc.js";
import { CLI, Sandbox } from "../helpers/repo.js";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = new Sandbox();
});
afterEach(() => sandbox.cleanup());

const command = (agent: string) => `'${process.execPath}' '${CLI}' hook ${agent}`;

/** Each agent's project settings file, and a hook of the user's in that agent's format. */
const AGENTS = {
  "claude-code": {
    file: ".claude/settings.json",
    mine: '"Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]',
  },
  codex: {
    file: ".codex/hooks.json",
    mine: '"Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]',
  },
  cursor: { file: ".cursor/hooks.json", mine: '"stop": [{ "command": "./notify.sh" }]' },
  gemini: {
    file: ".gemini/settings.json",
    mine: '"AfterAgent": [{ "hooks": [{ "name": "n", "type": "command", "command": "notify-send done" }] }]',
  },
} as const;

/**
 * Settings as users write them: values JSON.parse and JSON.stringify would change (a 20-digit
 * number, an escape, a repeated key), tabs, CRLF line ends, keys in their own order; with the
 * agent's own hooks or without.
 */
function oddSettings(mine: string | null, agent: string): string {
  const comments = agent === "gemini";
  const note = comments ? "\t// my settings, kept as I wrote them\r\n" : "";
  const lines = [
    // Cursor keeps the version its hooks need (install adds it, and removes it only with them).
    ...(agent === "cursor" ? ['\t"version": 1'] : []),
    '\t"n": 12345678901234567890',
    '\t"name": "caf\\u00e9 \\/ \\ud83d\\ude00"',
    '\t"dup": 1',
    '\t"dup": 2',
    comments ? '\t"list": [1, 2, /* three */ 3,]' : '\t"list": [1,2,  3]',
    ...(mine === null ? [] : [`\t"hooks": {\r\n\t\t${mine}\r\n\t}`]),
    '\t"zeta": {"a": 1.50, "b": 1e2}',
  ];
  return `{\r\n${note}${lines.join(",\r\n")}\r\n}\r\n`;
}

describe("install and uninstall edit only the entries they own", () => {
  for (const [agent, { file: name, mine }] of Object.entries(AGENTS)) {
    it(`${agent}: every byte of the user's settings stays, and uninstall gives the file back exactly`, () => {
      const dir = sandbox.dir("project");
      const file = path.join(dir, name);
      mkdirSync(path.dirname(file), { recursive: true });
      for (const hooks of [mine, null]) {
        const text = oddSettings(hooks, agent);
        writeFileSync(file, text);
        expect(sandbox.ok(dir, "install", agent, "--project").changed).toBe(true);
        const installed = readFileSync(file, "utf8");
        for (const kept of [
          '"n": 12345678901234567890,',
          '"name": "caf\\u00e9 \\/ \\ud83d\\ude00",\r\n\t"dup": 1,\r\n\t"dup": 2,',
          '"zeta": {"a": 1.50, "b": 1e2}',
          ...(hooks ? [hooks.slice(0, -1)] : []), // the user's entries, ours after them
          ...(agent === "gemini" ? ["// my settings, kept as I wrote them\r\n", "/* three */ 3,]"] : []),
        ])
          expect(installed).toContain(kept);
        // Added lines as the file has them: CRLF, tabs.
        expect(installed).not.toMatch(/[^\r]\n/);
        expect(installed).toMatch(/\r\n\t\t\t\t"/);
        const settings = parseJsonc(installed) as { hooks: Record<string, unknown[]> };
        expect(JSON.stringify(settings.hooks)).toContain(JSON.stringify(command(agent)));
        expect(sandbox.ok(dir, "install", agent, "--project").changed).toBe(false);
        expect(sandbox.ok(dir, "uninstall", agent, "--project").changed).toBe(true);
        expect(readFileSync(file, "utf8")).toBe(text);
      }
    });
  }

  it("an empty or blank settings file is given back as it was", () => {
    const dir = sandbox.dir("project");
    for (const agent of ["claude-code", "cursor"]) {
      const file = path.join(dir, AGENTS[agent as keyof typeof AGENTS].file);
      mkdirSync(path.dirname(file), { recursive: true });
      for (const text of ["", "  \n", "\r\n"]) {
        writeFileSync(file, text);
        const installed = sandbox.ok(dir, "install", agent, "--project");
        expect(installed).toMatchObject({ changed: true, created: false });
        expect(JSON.parse(readFileSync(file, "utf8")).hooks).toBeDefined();
        expect(sandbox.ok(dir, "uninstall", agent, "--project")).toMatchObject({
          changed: true,
          deleted: false,
        });
        expect(readFileSync(file, "utf8")).toBe(text);
      }
    }
  });

  it("writes through a hard-linked settings file: every link sees the hooks, and then the file as it was", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    const farm = path.join(sandbox.dir("dotfiles"), "claude-settings.json");
    const text = '{\n  "model": "opus"\n}\n';
    writeFileSync(farm, text);
    mkdirSync(path.dirname(file), { recursive: true });
    linkSync(farm, file);
    sandbox.ok(dir, "install", "claude-code", "--project");
    expect(statSync(file).ino).toBe(statSync(farm).ino);
    expect(statSync(farm).nlink).toBe(2);
    expect(readFileSync(farm, "utf8")).toContain(command("claude-code"));
    expect(existsSync(`${file}.ghostcommit-backup`)).toBe(false);
    sandbox.ok(dir, "uninstall", "claude-code", "--project");
    expect(statSync(file).ino).toBe(statSync(farm).ino);
    expect(readFileSync(farm, "utf8")).toBe(text);
    // A copy left by a write that was cut short: nothing is written until the user has looked.
    writeFileSync(`${file}.ghostcommit-backup`, text);
    const refused = sandbox.cli(dir, ["install", "claude-code", "--project"]);
    expect([refused.status, refused.stderr]).toEqual([
      1,
      expect.stringMatching(
        /^ghostcommit: .*settings\.json\.ghostcommit-backup is left from an interrupted write/,
      ),
    ]);
    expect(readFileSync(farm, "utf8")).toBe(text);
  });

  it("refuses a relative CODEX_HOME, which Codex takes against the directory it starts in", () => {
    const dir = sandbox.dir("project");
    for (const verb of ["install", "uninstall"]) {
      const result = sandbox.cli(dir, [verb, "codex"], undefined, { CODEX_HOME: ".codex" });
      expect([result.status, result.stderr.trim()]).toEqual([
        1,
        expect.stringMatching(/^ghostcommit: CODEX_HOME is a relative path \(\.codex\)/),
      ]);
    }
    expect(existsSync(path.join(dir, ".codex"))).toBe(false);
    // An absolute one is Codex's directory; an empty one is unset, as Codex reads it.
    const home = sandbox.dir("codex-home");
    expect(sandbox.cli(dir, ["install", "codex"], undefined, { CODEX_HOME: home }).status).toBe(0);
    expect(existsSync(path.join(home, "hooks.json"))).toBe(true);
    expect(sandbox.cli(dir, ["install", "codex"], undefined, { CODEX_HOME: "" }).status).toBe(0);
    expect(existsSync(path.join(sandbox.home, ".codex", "hooks.json"))).toBe(true);
  });
});
