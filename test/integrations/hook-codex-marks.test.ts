import { utimesSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { codex } from "./events.js";
import { expectQuiet, installedCommand, shellHook } from "./hook-helpers.js";

// Codex's hook events (developers.openai.com/codex/hooks; openai/codex codex-rs/hooks schema):
// session_id, transcript_path, cwd, hook_event_name, model, permission_mode, turn_id on turn
// events; tool_name, tool_use_id, tool_input on tool events. Its file edits go through apply_patch,
// whose tool_input.command is the patch. Builds before openai/codex#16732 ran hooks for the shell
// ("Bash") alone.
let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "src/app.js": "app0\n", "NOTES.md": "notes0\n" });
});
afterEach(() => sandbox.cleanup());

const session = "0199aaaa-1111-7000-8000-000000000001";
const turnId = (n: number) => `0199bbbb-000${n}-7000-8000-00000000000${n}`;
const send = (event: unknown) => expectQuiet(shellHook(sandbox, installedCommand("codex"), event, repo.dir));
const prompt = (n: number) =>
  codex(repo.dir, session, "UserPromptSubmit", { turn_id: turnId(n), prompt: `task ${n}` });
const stop = (n: number) =>
  codex(repo.dir, session, "Stop", {
    turn_id: turnId(n),
    stop_hook_active: false,
    last_assistant_message: "done",
  });
const tool = (event: string, n: number, name: string, command: string) =>
  codex(repo.dir, session, event, {
    turn_id: turnId(n),
    tool_name: name,
    tool_use_id: `call_${name}_${n}`,
    tool_input: { command },
    ...(event === "PostToolUse" ? { tool_response: "ok" } : {}),
  });
/** A tool call as Codex reports it: PreToolUse, its work, PostToolUse. */
const call = (n: number, name: string, command: string, work: () => void) => {
  send(tool("PreToolUse", n, name, command));
  work();
  send(tool("PostToolUse", n, name, command));
};
/** A person's save while the agent writes its answer, after its last tool call. */
const personSaves = () => {
  repo.write({ "NOTES.md": "my own notes\n" });
  const later = new Date(Date.now() + 30_000);
  utimesSync(repo.path("NOTES.md"), later, later);
};

describe("a Codex turn ended by Stop", () => {
  it("takes a file saved after the agent's last tool call for a person's once Codex hooks its edits", () => {
    // Turn 1: an apply_patch, which only a build that hooks its edits reports.
    send(prompt(1));
    const patch = "*** Begin Patch\n*** Update File: src/app.js\n@@\n-app0\n+app1\n*** End Patch\n";
    call(1, "apply_patch", patch, () => repo.write({ "src/app.js": "app1\n" }));
    send(stop(1));
    // Turn 2: a shell call, then the person's save, then Stop.
    send(prompt(2));
    call(2, "Bash", "npm run gen", () => repo.write({ "gen/out.js": "out\n" }));
    personSaves();
    send(stop(2));
    const [, second] = sandbox.ok(repo.dir, "log", "--session", session);
    expect(second.uncertain).toEqual(["NOTES.md"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", session, "--to", turnId(2), "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["NOTES.md"]);
    expect(repo.read("NOTES.md")).toBe("my own notes\n");
    // The shell call's work alone goes back.
    sandbox.ok(repo.dir, "rewind", "--session", session, "--to", turnId(2), "gen/out.js");
    expect([repo.exists("gen/out.js"), repo.read("NOTES.md")]).toEqual([false, "my own notes\n"]);
  });

  it("keeps a change after the last shell call the turn's where the build reports its shell alone", () => {
    // A build before openai/codex#16732: its apply_patch ran unhooked, after the shell call.
    send(prompt(1));
    call(1, "Bash", "npm run gen", () => repo.write({ "gen/out.js": "out\n" }));
    repo.write({ "src/app.js": "app1\n" });
    send(stop(1));
    const [first] = sandbox.ok(repo.dir, "log", "--session", session);
    expect(first.uncertain).toBeUndefined();
    sandbox.ok(repo.dir, "rewind", "--session", session, "--to", turnId(1));
    expect([repo.read("src/app.js"), repo.exists("gen/out.js")]).toEqual(["app0\n", false]);
  });
});
