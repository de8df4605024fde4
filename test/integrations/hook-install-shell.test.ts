import { spawnSync } from "node:child_process";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, copyCli, type Repo, type Sandbox } from "../helpers/repo.js";
import { SCRIPTS } from "./agent-events.js";
import { claude } from "./events.js";
import { appWithSecret, installedCommand, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  ({ sandbox, repo } = appWithSecret());
});
afterEach(() => sandbox.cleanup());

/** Every handler command in an agent's settings file. */
function commandsIn(file: string): string[] {
  const out = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if (typeof o.command === "string") out.add(o.command);
      Object.values(o).forEach(visit);
    }
  };
  visit(JSON.parse(readFileSync(file, "utf8")).hooks);
  return [...out];
}

describe("installed hook commands", () => {
  it("run from /bin/sh with PATH=/usr/bin:/bin for all four agents, and doctor reports one that no longer runs", async () => {
    // The CLI installed under a path a shell would split or unquote: a space and a quote.
    const dist = path.join(sandbox.home, "it's global", "lib", "dist");
    mkdirSync(dist, { recursive: true });
    const entry = copyCli(dist);
    const install = (agent: string) =>
      spawnSync(process.execPath, [entry, "install", agent, "--project", "--json"], {
        cwd: repo.dir,
        env: sandbox.env,
        encoding: "utf8",
      });
    for (const script of SCRIPTS) {
      const result = install(script.agent);
      expect(result.status).toBe(0);
      const [command] = commandsIn(JSON.parse(result.stdout).file);
      expect(command).toBe(installedCommand(script.agent, entry));
      const s = `${script.agent}-shell`;
      const run = shellHook(sandbox, command, script.begin(repo.dir, s, 1, repo.dir), repo.dir);
      expect([run.status, run.stderr]).toEqual([0, ""]);
      expect(await logIn(repo, s)).toHaveLength(1);
    }
    // What an older release wrote: a bare name that an agent's PATH does not find.
    const bare = shellHook(sandbox, "ghostcommit hook claude-code", "{}", repo.dir);
    expect(bare.status).toBe(127);
    expect(repo.ok("doctor").ok).toBe(true);

    rmSync(entry); // the package was uninstalled (or Node moved)
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    const broken = doctor.json.problems.filter((p: any) => p.code === "hook-command-broken");
    // The slash commands name the same Node and CLI: one problem for the three.
    expect(broken.map((p: any) => path.relative(repo.dir, p.path)).sort()).toEqual([
      ".claude/commands",
      ".claude/settings.json",
      ".codex/hooks.json",
      ".cursor/hooks.json",
      ".gemini/settings.json",
    ]);
    expect(broken[0].message).toContain(`${entry} is gone`);

    // Installing again (from the package's new place) replaces the stale command in place.
    const again = repo.ok("install", "claude-code", "--project");
    expect(again).toMatchObject({ changed: true });
    expect(commandsIn(again.file)).toEqual([installedCommand("claude-code")]);
    expect(repo.ok("install", "claude-code", "--project").changed).toBe(false);
  });

  it("doctor checks a settings file with comments (Gemini CLI allows them), and says when it cannot read one", () => {
    const dist = path.join(sandbox.home, "pkg", "dist");
    mkdirSync(dist, { recursive: true });
    const entry = copyCli(dist);
    const install = spawnSync(process.execPath, [entry, "install", "gemini", "--project"], {
      cwd: repo.dir,
      env: sandbox.env,
      encoding: "utf8",
    });
    expect(install.status).toBe(0);
    const file = path.join(repo.dir, ".gemini", "settings.json");
    const settings = readFileSync(file, "utf8");
    writeFileSync(file, `// my project's Gemini settings\n${settings.replace(/\n}\s*$/, ",\n}\n")}`);
    expect(repo.ok("doctor").ok).toBe(true);
    rmSync(entry); // the package was uninstalled
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toEqual([
      expect.objectContaining({
        code: "hook-command-broken",
        message: expect.stringContaining(`${entry} is gone`),
      }),
    ]);
    writeFileSync(file, `${settings.slice(0, -3)} /* never closed`);
    const unreadable = repo.cli(["doctor", "--json"]);
    expect(unreadable.json.problems).toEqual([
      expect.objectContaining({
        message: `cannot check the Gemini CLI hook in ${file}: the file is not valid JSON`,
      }),
    ]);
  });

  it("a hook an earlier release installed (the ES module entry) still runs, and install replaces it", async () => {
    // Releases before the CommonJS entry wrote dist/ghostcommit.mjs into agents' hook files.
    const earlier = installedCommand("claude-code", path.join(path.dirname(CLI), "ghostcommit.mjs"));
    const file = path.join(repo.dir, ".claude", "settings.json");
    mkdirSync(path.dirname(file), { recursive: true });
    const group = [{ hooks: [{ type: "command", command: earlier }] }];
    const events = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"];
    writeFileSync(file, JSON.stringify({ hooks: Object.fromEntries(events.map((e) => [e, group])) }));
    const run = shellHook(
      sandbox,
      earlier,
      claude(repo.dir, "old", "UserPromptSubmit", { prompt: "p" }),
      repo.dir,
    );
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(await logIn(repo, "old")).toHaveLength(1);

    const again = repo.ok("install", "claude-code", "--project");
    expect(again.changed).toBe(true);
    expect(commandsIn(file)).toEqual([installedCommand("claude-code")]);
    expect(installedCommand("claude-code")).toContain("ghostcommit.cjs' hook claude-code");
    repo.ok("uninstall", "claude-code", "--project");
    expect(commandsIn(file)).toEqual([]);
  });

  it("install and uninstall keep a private settings file private", () => {
    const file = path.join(sandbox.home, ".claude", "settings.json");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ env: { ANTHROPIC_API_KEY: "sk-secret" } }, null, 2)}\n`);
    chmodSync(file, 0o600);
    const before = statSync(file);
    sandbox.ok(repo.dir, "install", "claude-code");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    sandbox.ok(repo.dir, "uninstall", "claude-code");
    const after = statSync(file);
    expect([after.mode & 0o777, after.uid, after.gid]).toEqual([0o600, before.uid, before.gid]);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ env: { ANTHROPIC_API_KEY: "sk-secret" } });
  });

  it("creates the store owner-only: 0700 directories, 0600 files (the user's linked objects keep theirs)", () => {
    const send = (event: unknown) =>
      expect(shellHook(sandbox, installedCommand("claude-code"), event, repo.dir).status).toBe(0);
    send(claude(repo.dir, "p1", "UserPromptSubmit", { prompt: "p" }));
    send(
      claude(repo.dir, "p1", "PreToolUse", {
        tool_name: "Edit",
        tool_input: { file_path: repo.path(".env") },
      }),
    );
    repo.write({ ".env": "KEY=new\n", "src/app.js": "v1\n" });
    send(claude(repo.dir, "p1", "Stop", { stop_hook_active: false }));
    repo.ok("gc");
    const open: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        const stat = lstatSync(file);
        if (stat.isDirectory()) walk(file);
        if ((stat.mode & 0o077) !== 0 && !(stat.isFile() && stat.nlink > 1))
          open.push(path.relative(sandbox.home, file));
      }
    };
    const data = path.join(sandbox.home, "data");
    walk(data);
    expect(statSync(data).mode & 0o077).toBe(0);
    expect(open).toEqual([]);
  });
});

describe("small things a user meets", () => {
  it("`show ID | head -2` ends quietly with status 0; doctor names the log; counts read right", () => {
    // More than a pipe holds (64 KiB): the reader is gone while `show` still writes.
    const files: Record<string, string> = {};
    for (let n = 0; n < 1200; n++)
      files[`d${n % 10}/a-file-name-long-enough-to-fill-a-pipe-buffer-${n}.txt`] = "";
    repo.write(files);
    repo.git("add", "-A");
    repo.git("commit", "-qm", "many");
    const snap = repo.ok("snapshot");
    const errors = path.join(sandbox.home, "show.err");
    const piped = spawnSync(
      "/bin/sh",
      [
        "-c",
        `{ '${process.execPath}' '${CLI}' show ${snap.id} 2>'${errors}'; echo "status $?" >&2; } | head -2`,
      ],
      { cwd: repo.dir, env: sandbox.env, encoding: "utf8" },
    );
    expect(piped.stdout.split("\n")).toHaveLength(3);
    expect([piped.stderr, readFileSync(errors, "utf8")]).toEqual(["status 0\n", ""]);

    const send = (event: unknown) => shellHook(sandbox, installedCommand("claude-code"), event, repo.dir);
    send(claude(repo.dir, "s1", "UserPromptSubmit", { prompt: "p" }));
    repo.write({ "src/app.js": "v1\n" });
    const bash = { tool_name: "Bash", tool_input: { command: "node edit.js" }, tool_use_id: "toolu_1" };
    send(claude(repo.dir, "s1", "PostToolUse", { ...bash, tool_response: { stdout: "" } }));
    send(claude(repo.dir, "s1", "Stop", { stop_hook_active: false }));
    expect(repo.cli(["sessions"]).stdout).toMatch(/^s1 {2}1 turn {2}/);
    expect(repo.cli(["rewind", "--session", "s1", "--to", "1"]).stdout).toMatch(
      /^rewound turn 1 of session s1/,
    );
    send("not json");
    const doctor = repo.cli(["doctor"]);
    expect(doctor.status).toBe(1);
    const log = readdirSync(path.join(sandbox.home, "data", "workspaces")).map((k) =>
      path.join(sandbox.home, "data", "workspaces", k, "ghostcommit.log"),
    )[0];
    expect(doctor.stdout).toContain(`1 hook failure in the last 7 days`);
    expect(doctor.stdout).toContain(`Details in ${log};`);
  });
});
