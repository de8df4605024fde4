import { readdirSync, realpathSync, utimesSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { codex, updatePatch } from "./events.js";
import { hookLogs, installedCommand, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

// `codex resume <id>` continues a session wherever Codex is started: its events keep the
// session_id and carry the new `cwd` (developers.openai.com/codex/hooks: session_id, turn_id, cwd).
// A session's workspace is fixed by its first event, so work elsewhere is not snapshotted, and
// README ("One session, one workspace") promises its next prompt says so.
let sandbox: Sandbox;
let proj: Repo;
let other: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  proj = sandbox.repo("proj", { "src/a.ts": "a1\n", "notes.txt": "n0\n" });
  other = sandbox.repo("other", { "src/a.ts": "a1\n" });
});
afterEach(() => sandbox.cleanup());

const send = (event: unknown, cwd: string) => {
  const run = shellHook(sandbox, installedCommand("codex"), event, cwd);
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
};
const patch = updatePatch("src/a.ts", "a1", "edited");

describe("a Codex session resumed outside the workspace its first event fixed", () => {
  it("in another repository: its next prompt says its work there is not snapshotted, and doctor names the file", () => {
    send(codex(proj.dir, "s1", "UserPromptSubmit", { turn_id: "t1", prompt: "first turn" }), proj.dir);
    send(codex(proj.dir, "s1", "Stop", { turn_id: "t1", stop_hook_active: false }), proj.dir);

    const answer = send(
      codex(other.dir, "s1", "UserPromptSubmit", { turn_id: "t2", prompt: "resumed in other" }),
      other.dir,
    );
    const here = realpathSync(other.dir);
    expect(JSON.parse(answer).systemMessage).toBe(
      `ghostcommit: this session's workspace is ${proj.dir}, fixed by its first event; its work outside it (here, ${here}) is not snapshotted: start a new session here for undo`,
    );
    const call = {
      turn_id: "t2",
      tool_name: "apply_patch",
      tool_use_id: "call_1",
      tool_input: { command: patch },
    };
    expect(send(codex(other.dir, "s1", "PreToolUse", call), other.dir)).toBe("");
    // The log names the file that was not recorded where it is, not as a path of the workspace.
    const errors = hookLogs(sandbox)
      .filter((e) => e.level === "error")
      .map((e) => e.message);
    expect(errors).toEqual([`not recorded: a path outside the workspace ${proj.dir}: ${other.dir}/src/a.ts`]);
  });

  it("in the repository above the directory it began in: the prompt says so; inside it nothing is said", () => {
    const src = proj.path("src");
    send(codex(src, "s2", "UserPromptSubmit", { turn_id: "t1", prompt: "began in src" }), src);
    send(codex(src, "s2", "Stop", { turn_id: "t1", stop_hook_active: false }), src);
    const inside = send(codex(src, "s2", "UserPromptSubmit", { turn_id: "t2", prompt: "still in src" }), src);
    expect(inside).toBe("");
    send(codex(src, "s2", "Stop", { turn_id: "t2", stop_hook_active: false }), src);

    const answer = send(
      codex(proj.dir, "s2", "UserPromptSubmit", { turn_id: "t3", prompt: "resumed at the root" }),
      proj.dir,
    );
    expect(JSON.parse(answer).systemMessage).toContain(
      `this session's workspace is ${realpathSync(src)}, fixed by its first event; its work outside it (here, ${realpathSync(proj.dir)}) is not snapshotted`,
    );
  });
});

describe("a Codex session active every day for over 30 days", () => {
  it("keeps the workspace its first event fixed, resumed from a subdirectory after another session began", async () => {
    send(codex(proj.dir, "long", "UserPromptSubmit", { turn_id: "t1", prompt: "day 1" }), proj.dir);
    send(codex(proj.dir, "long", "Stop", { turn_id: "t1", stop_hook_active: false }), proj.dir);
    // Its record was written at its first event, 31 days ago.
    const records = path.join(sandbox.home, "data", "hook-sessions");
    const monthAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000);
    for (const name of readdirSync(records)) utimesSync(path.join(records, name), monthAgo, monthAgo);
    send(codex(proj.dir, "long", "UserPromptSubmit", { turn_id: "t2", prompt: "day 31" }), proj.dir);
    send(codex(proj.dir, "long", "Stop", { turn_id: "t2", stop_hook_active: false }), proj.dir);
    // Any new session's first event forgets records idle for 30 days.
    send(codex(other.dir, "new", "UserPromptSubmit", { turn_id: "o1", prompt: "elsewhere" }), other.dir);
    const src = proj.path("src");
    send(codex(src, "long", "UserPromptSubmit", { turn_id: "t3", prompt: "day 32, from src/" }), src);
    send(codex(src, "long", "Stop", { turn_id: "t3", stop_hook_active: false }), src);
    expect((await logIn(proj, "long")).map((t: any) => t.turn)).toEqual(["t1", "t2", "t3"]);
  });
});

describe("a command run below a subdirectory where a Codex session began", () => {
  it("names that subdirectory's sessions, not only the repository's root", () => {
    const src = proj.path("src");
    proj.write({ "src/lib/x.ts": "x\n" });
    send(codex(src, "s3", "UserPromptSubmit", { turn_id: "t1", prompt: "began in src" }), src);
    send(codex(src, "s3", "Stop", { turn_id: "t1", stop_hook_active: false }), src);
    const lost = sandbox.cli(proj.path("src/lib"), ["log"]);
    expect(lost.status).not.toBe(0);
    expect(lost.stderr).toContain(
      `(a subdirectory keeps its own sessions: the repository's are reached with -C ${proj.dir}; -C ${realpathSync(src)} has session s3)`,
    );
  });
});
