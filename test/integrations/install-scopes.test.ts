import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = new Sandbox();
});
afterEach(() => sandbox.cleanup());

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

describe("install says what it left alone and what would run twice", () => {
  it("names a slash command file of the user's that it left as it was, in text and --json", () => {
    const dir = sandbox.dir("project");
    const mine = path.join(dir, ".claude", "commands", "ghostcommit-redo.md");
    mkdirSync(path.dirname(mine), { recursive: true });
    writeFileSync(mine, "my own redo\n");
    const report = sandbox.ok(dir, "install", "claude-code", "--project");
    expect(report.commandsLeftAsTheyWere).toEqual([mine]);
    const human = sandbox.cli(dir, ["install", "claude-code", "--project"]);
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toContain(`left ${mine} as it was: it is your own command`);
    expect(readFileSync(mine, "utf8")).toBe("my own redo\n");
  });

  it("warns when the other scope has ghostcommit's hooks for the agent, and doctor reports it", () => {
    const repo = sandbox.repo("project");
    const userFile = path.join(sandbox.home, ".claude", "settings.json");
    // An older install's bare command at user level: Claude Code runs it and the project's.
    writeJson(userFile, {
      hooks: { Stop: [{ hooks: [{ type: "command", command: "ghostcommit hook claude-code" }] }] },
    });
    expect(repo.ok("install", "claude-code").alsoInstalledIn).toBeNull();
    const projectFile = path.join(repo.dir, ".claude", "settings.json");
    writeJson(projectFile, {
      hooks: { Stop: [{ hooks: [{ type: "command", command: "ghostcommit hook claude-code" }] }] },
    });
    const report = repo.ok("install", "claude-code");
    expect(report.alsoInstalledIn).toEqual({ scope: "project", file: projectFile });
    expect(report.warnings.join("\n")).toContain(
      `ghostcommit's Claude Code hooks are also in ${projectFile} (project settings), so Claude Code runs each event's hook twice`,
    );
    const text = repo.cli(["install", "claude-code"]);
    expect(text.stdout).toContain(
      `ghostcommit's Claude Code hooks are also in ${projectFile} (project settings)`,
    );
    expect(text.stdout).toContain("`ghostcommit uninstall claude-code --project` removes those");
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    // (The project's bare, partial install is reported too: not runnable, outdated.)
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({
        code: "hook-installed-twice",
        message: expect.stringContaining(`hooks are in both ${userFile} and ${projectFile}`),
      }),
    );
    // One scope left: nothing runs twice.
    repo.ok("uninstall", "claude-code", "--project");
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([]);
  });

  it("does not warn where the agent runs identical hooks once, and does where it runs both", () => {
    const repo = sandbox.repo("project");
    // Claude Code runs a handler both files have once.
    repo.ok("install", "claude-code");
    expect(repo.ok("install", "claude-code", "--project").alsoInstalledIn).toBeNull();
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([]);
    // Codex runs every file's hooks.
    repo.ok("install", "codex");
    const codex = repo.ok("install", "codex", "--project");
    expect(codex.alsoInstalledIn).toEqual({
      scope: "user",
      file: path.join(sandbox.home, ".codex", "hooks.json"),
    });
    expect(repo.cli(["doctor", "--json"]).json.problems.map((p: { code: string }) => p.code)).toEqual([
      "hook-installed-twice",
    ]);
  });

  it("warns of Codex's project layers: a session started in a subdirectory loads the repository's too", () => {
    // developers.openai.com/codex: project `.codex/` layers load from the project root (the
    // repository's top, by its `.git`) down to the working directory, each with its hooks.
    const repo = sandbox.repo("project", { "src/a.ts": "a\n" });
    const src = path.join(repo.dir, "src");
    repo.ok("install", "codex", "--project");
    const rootFile = path.join(repo.dir, ".codex", "hooks.json");
    const below = sandbox.ok(src, "install", "codex", "--project");
    expect(below.alsoInstalledIn).toEqual({ scope: "project", file: rootFile });
    expect(below.warnings.join("\n")).toContain(
      `ghostcommit's Codex hooks are also in ${rootFile} (the project settings of a directory above, which it loads too)`,
    );
    const doctor = sandbox.cli(src, ["doctor", "--json"]);
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({
        code: "hook-installed-twice",
        message: expect.stringContaining(
          `hooks are in both ${path.join(src, ".codex", "hooks.json")} and ${rootFile}`,
        ),
      }),
    );
    // At the top, only its own layer loads: nothing twice. Nor below, once one is removed.
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([]);
    sandbox.ok(src, "uninstall", "codex", "--project");
    expect(sandbox.cli(src, ["doctor", "--json"]).json.problems).toEqual([]);
    // Installed for the user from src/: the way to remove the repository's names its directory,
    // as run from src/ a bare `uninstall codex --project` would find no hooks there.
    const user = sandbox.ok(src, "install", "codex");
    expect(user.alsoInstalledIn).toEqual({ scope: "project", file: rootFile });
    expect(user.warnings.join("\n")).toContain(
      `\`ghostcommit -C ${repo.dir} uninstall codex --project\` removes those`,
    );
    expect(sandbox.cli(src, ["doctor", "--json"]).json.problems[0].message).toContain(
      `\`ghostcommit -C ${repo.dir} uninstall codex --project\` or \`ghostcommit uninstall codex\``,
    );
  });
});
