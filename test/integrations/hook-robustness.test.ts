import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents, cursor, gemini } from "./events.js";
import { treeDigest } from "../helpers/support.js";
import { expectQuiet, hook, hookLogs, installedCommand, shellHook } from "./hook-helpers.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo();
});
afterEach(() => sandbox.cleanup());

/** A Claude Code prompt in the repository, through the installed command as the agent runs it. */
function prompt(session: string, env: Record<string, string> = {}) {
  const event = claudeEvents.prompt(repo.dir, session, "go");
  return shellHook(sandbox, installedCommand("claude-code"), event, repo.dir, env);
}

describe("hook robustness", () => {
  it("logs garbage input instead of failing, and doctor shows it", () => {
    expectQuiet(prompt("s")); // the repository's store exists: its log takes the failures
    for (const garbage of ["", "not json", "[1,2]", '{"hook_event_name":']) {
      expectQuiet(hook(sandbox, "claude-code", garbage, repo.dir));
    }
    const errors = hookLogs(sandbox).filter((e) => e.level === "error");
    expect(errors).toHaveLength(4);
    expect(errors[0].message).toContain("not a JSON hook event");
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({ code: "hook-errors", message: expect.stringContaining("4 hook failures") }),
    );
  });

  it("makes no store for garbage input where none is (a subdirectory the agent's hook ran in): the global log takes it", () => {
    mkdirSync(repo.path("lib"));
    for (const agent of ["codex", "gemini", "claude-code"])
      hook(sandbox, agent, "not json", repo.path("lib"));
    expect(existsSync(path.join(sandbox.home, "data", "workspaces"))).toBe(false);
    const logged = readFileSync(path.join(sandbox.home, "data", "hooks.log"), "utf8")
      .trim()
      .split("\n");
    expect(logged.map((line) => JSON.parse(line))).toEqual(
      ["codex", "gemini", "claude-code"].map((agent) =>
        expect.objectContaining({
          agent,
          dir: repo.path("lib"),
          message: 'not a JSON hook event: "not json"',
        }),
      ),
    );
    // Doctor in the repository shows them (recent), as it shows any global failure that concerns it.
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining("not a JSON hook event") }),
    );
  });

  it("answers agents that need JSON even when the input is garbage", () => {
    expect(JSON.parse(hook(sandbox, "cursor", "oops", repo.dir).stdout)).toEqual({ continue: true });
    expect(JSON.parse(hook(sandbox, "gemini", "oops", repo.dir).stdout)).toEqual({});
    expectQuiet(hook(sandbox, "codex", "oops", repo.dir));
  });

  it("exits 0 with nothing on stdout for an unknown agent, a missing agent or unknown options", () => {
    const event = claudeEvents.prompt(repo.dir, "s", "hi");
    expectQuiet(hook(sandbox, "vim", event, repo.dir));
    expectQuiet(sandbox.cli(repo.dir, ["hook"], JSON.stringify(event)));
    expectQuiet(
      hook(sandbox, "claude-code", claudeEvents.stop(repo.dir, "s"), repo.dir, [
        "--bogus",
        "--store",
        "nope",
      ]),
    );
  });

  it("does no work on SessionStart, or SessionEnd of a session it never saw: no store is even created", () => {
    expectQuiet(hook(sandbox, "claude-code", claudeEvents.sessionStart(repo.dir, "s"), repo.dir));
    expectQuiet(hook(sandbox, "claude-code", claudeEvents.sessionEnd(repo.dir, "s"), repo.dir));
    expectQuiet(hook(sandbox, "claude-code", claudeEvents.bash(repo.dir, "s", "ls"), repo.dir));
    expect(existsSync(path.join(sandbox.home, "data", "workspaces"))).toBe(false);
  });

  it("is a silent no-op where ghostcommit is disabled, still giving Cursor its answer", () => {
    writeFileSync(repo.path(".ghostcommit.json"), '{ "enabled": false }\n');
    expectQuiet(hook(sandbox, "claude-code", claudeEvents.prompt(repo.dir, "s", "hi"), repo.dir));
    expectQuiet(hook(sandbox, "claude-code", claudeEvents.write(repo.dir, "s", repo.path("a")), repo.dir));
    expectQuiet(hook(sandbox, "claude-code", claudeEvents.stop(repo.dir, "s"), repo.dir));
    expectQuiet(hook(sandbox, "claude-code", "garbage", repo.dir));
    const before = hook(
      sandbox,
      "cursor",
      cursor(repo.dir, "c", "beforeSubmitPrompt", { prompt: "p" }),
      repo.dir,
    );
    expect(JSON.parse(before.stdout)).toEqual({ continue: true });
    expectQuiet(hook(sandbox, "gemini", gemini(repo.dir, "g", "AfterAgent"), repo.dir), "{}");
    expect(hookLogs(sandbox)).toEqual([]);
    expect(existsSync(path.join(sandbox.home, "data", "workspaces"))).toBe(false);
  });

  it("logs an event whose workspace does not exist in the global hook log, and tells the user", () => {
    const gone = path.join(sandbox.home, "gone");
    const told = {
      systemMessage: `ghostcommit: no snapshots of this session's work: not a directory: ${gone}`,
    };
    expectQuiet(
      hook(sandbox, "claude-code", claudeEvents.prompt(gone, "s", "hi"), repo.dir),
      JSON.stringify(told),
    );
    expect(existsSync(path.join(sandbox.home, "data", "hooks.log"))).toBe(true);
  });

  it("never snapshots the home directory an agent was started in, nor one -C names, and says so once", () => {
    const inHome = () =>
      hook(sandbox, "claude-code", claudeEvents.prompt(sandbox.home, "s", "hi"), sandbox.home);
    const told = `ghostcommit: no snapshots of this session's work: not snapshotting ${sandbox.home} (home or root directory); start the agent in a project or pass -C`;
    expectQuiet(inHome(), JSON.stringify({ systemMessage: told }));
    expectQuiet(inHome()); // once a session
    // -C naming it: the library would refuse the capture, so the hook says so as for a start there.
    const named = hook(sandbox, "claude-code", claudeEvents.prompt(sandbox.home, "s2", "hi"), sandbox.home, [
      "-C",
      sandbox.home,
    ]);
    expectQuiet(named, JSON.stringify({ systemMessage: told }));
    expect(existsSync(path.join(sandbox.home, "data", "workspaces"))).toBe(false);
    const warning = readFileSync(path.join(sandbox.home, "data", "hooks.log"), "utf8");
    expect(warning).toContain("home or root directory");
  });

  it("tells the user at the first prompt when the data directory cannot hold a store", () => {
    const notADir = path.join(sandbox.home, "data-is-a-file");
    writeFileSync(notADir, "");
    const first = prompt("s1", { GHOSTCOMMIT_HOME: notADir });
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      systemMessage: `ghostcommit: no snapshots of this session's work: the data directory cannot hold a store: ${notADir} is a file, not a directory (GHOSTCOMMIT_HOME sets it)`,
    });
    // Where no variable chose it (the agent passed only HOME), the message does not blame one.
    const home = path.join(sandbox.home, "bare-home");
    mkdirSync(path.join(home, ".local", "share"), { recursive: true });
    mkdirSync(path.join(home, ".config", "ghostcommit"), { recursive: true });
    writeFileSync(path.join(home, ".config", "ghostcommit", "config.json"), '{"watchman": false}\n');
    writeFileSync(path.join(home, ".local", "share", "ghostcommit"), "");
    expect(JSON.parse(prompt("s1", { GHOSTCOMMIT_HOME: "", HOME: home }).stdout).systemMessage).toBe(
      `ghostcommit: no snapshots of this session's work: the data directory cannot hold a store: ${home}/.local/share/ghostcommit is a file, not a directory (the default under HOME; GHOSTCOMMIT_HOME or XDG_DATA_HOME sets another)`,
    );
    // Once the data directory works, prompts are quiet and the turn is recorded.
    expectQuiet(prompt("s1"));
    expect(repo.cli(["sessions", "--json"]).json).toMatchObject([{ session: "s1", turns: 1 }]);
  });

  // Needs root to give the repository to another user (uid 65534): git then refuses it.
  it.skipIf(process.getuid?.() !== 0)(
    "tells the user, once a session, why a repository git refuses gets no snapshots",
    () => {
      const gitDir = () => Object.fromEntries(treeDigest(path.join(repo.dir, ".git")));
      spawnSync("chown", ["-R", "65534:65534", repo.dir]);
      const before = gitDir();
      const first = prompt("s1");
      expect(first.status, first.stderr).toBe(0);
      const told = JSON.parse(first.stdout).systemMessage as string;
      expect(told).toMatch(/^ghostcommit: no snapshots of this session's work: .*dubious ownership/);
      expect(told).toContain(`safe.directory '${repo.dir}'`);
      expectQuiet(prompt("s1")); // told once
      expect(JSON.parse(prompt("s2").stdout).systemMessage).toBe(told); // a new session hears it
      const logged = readFileSync(path.join(sandbox.home, "data", "hooks.log"), "utf8");
      expect(logged.match(/dubious ownership/g)).toHaveLength(3);
      expect(gitDir()).toEqual(before);
      sandbox.git(sandbox.home, "config", "--global", "--add", "safe.directory", repo.dir);
      expectQuiet(prompt("s1"));
      expect(repo.cli(["sessions", "--json"]).json).toMatchObject([{ session: "s1", turns: 1 }]);
    },
  );
});
