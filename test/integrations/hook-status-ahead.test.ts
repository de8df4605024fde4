import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { claude } from "./events.js";
import { installedCommand, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

// Claude Code's documented payloads (code.claude.com/docs/en/hooks): UserPromptSubmit carries
// `prompt`; PreToolUse `tool_name` and `tool_input`; PostToolUse adds `tool_response`; Stop
// `stop_hook_active`. Sent through the installed command run by `/bin/sh -c`, on a socket as
// Node-based agents such as Claude Code hand a hook its event, or on a pipe as Codex (a Rust
// program: `Stdio::piped()`) does. The loader looks at the event before the bundle loads and,
// when it takes a snapshot of the whole workspace, starts the status the last capture from the
// hook's directory ran, as a later `snapshot` does.

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "src/app.js": "v0\n", "README.md": "readme\n" });
});
afterEach(() => sandbox.cleanup());

const env = () => ({ CLAUDE_PROJECT_DIR: repo.dir, GHOSTCOMMIT_TRACE: "1" });

/** The installed command reading the event from `file` through a pipe, as `producer` writes it. */
function piped(producer: string): string {
  return `${producer} | ${installedCommand("claude-code")}`;
}

/** Sends one event, on a socket or a pipe; returns what the trace says of the status started ahead. */
function send(event: unknown, on: "socket" | "pipe" = "socket"): string[] {
  const file = path.join(sandbox.home, "event.json");
  writeFileSync(file, JSON.stringify(event));
  const run =
    on === "socket"
      ? shellHook(sandbox, installedCommand("claude-code"), event, repo.dir, env())
      : shellHook(sandbox, piped(`cat '${file}'`), "", repo.dir, env());
  expect([run.status, run.stdout]).toEqual([0, ""]);
  return run.stderr
    .split("\n")
    .filter((line) => line.includes("status ahead:"))
    .map((line) => line.replace(/^.*status ahead: /, ""));
}

const edit = (file: string) => ({
  tool_name: "Edit",
  tool_input: { file_path: path.join(repo.dir, file), old_string: "v1", new_string: "v2" },
});
const shell = {
  tool_name: "Bash",
  tool_input: { command: "make notes", description: "make notes" },
  tool_response: { stdout: "", stderr: "", interrupted: false, isImage: false },
};

describe("a hook's status started ahead of the bundle", () => {
  it("is started for the events that snapshot the whole workspace only, and the turn holds every change", async () => {
    send(claude(repo.dir, "s", "UserPromptSubmit", { prompt: "first" }));
    repo.write({ "src/app.js": "v1\n" });
    send(claude(repo.dir, "s", "Stop", { stop_hook_active: false })); // the plan, the private index copy

    expect(send(claude(repo.dir, "s", "UserPromptSubmit", { prompt: "second" }))).toEqual([
      "started",
      "adopted",
    ]);
    // An edit tool's events read only the file they name: no status is started for them.
    expect(send(claude(repo.dir, "s", "PreToolUse", edit("src/app.js")))).toEqual([]);
    repo.write({ "src/app.js": "v2\n" });
    expect(send(claude(repo.dir, "s", "PostToolUse", { ...edit("src/app.js"), tool_response: {} }))).toEqual(
      [],
    );
    repo.write({ "notes.txt": "from the shell\n" });
    repo.remove("README.md");
    expect(send(claude(repo.dir, "s", "PostToolUse", shell), "pipe")).toEqual(["started", "adopted"]);
    repo.write({ "notes.txt": "from the shell, again\n" });
    expect(send(claude(repo.dir, "s", "PostToolUse", shell), "pipe")).toEqual(["started", "adopted"]);
    expect(send(claude(repo.dir, "s", "Stop", { stop_hook_active: false }))).toEqual(["started", "adopted"]);

    const turns = (await logIn(repo, "s")) as { turn: string; prompt: string; changed: string[] }[];
    expect(turns.map((t) => [t.turn, t.prompt, [...t.changed].sort()])).toEqual([
      ["1", "first", ["src/app.js"]],
      ["2", "second", ["README.md", "notes.txt", "src/app.js"]],
    ]);
    repo.ok("rewind", "--session", "s", "--to", "2");
    expect([repo.read("src/app.js"), repo.read("README.md"), repo.exists("notes.txt")]).toEqual([
      "v1\n",
      "readme\n",
      false,
    ]);
  });

  it("reads an event the agent is still writing: what the loader read is handed on, and the rest is read after", async () => {
    send(claude(repo.dir, "s", "UserPromptSubmit", { prompt: "first" }));
    send(claude(repo.dir, "s", "Stop", { stop_hook_active: false }));
    // A prompt long enough to span several reads, written in two parts a second apart: the
    // loader does not wait for the second, and the hook reads on.
    const prompt = `a long prompt ${"x".repeat(200_000)} ends here`;
    const file = path.join(sandbox.home, "event.json");
    const text = JSON.stringify(claude(repo.dir, "s", "UserPromptSubmit", { prompt }));
    writeFileSync(file, text);
    const half = Math.floor(text.length / 2);
    const producer = `(head -c ${half} '${file}'; sleep 1; tail -c +${half + 1} '${file}')`;
    const run = shellHook(sandbox, piped(producer), "", repo.dir, env());
    expect([run.status, run.stdout]).toEqual([0, ""]);
    // Not a whole event before the bundle loaded: nothing was started ahead for it.
    expect(run.stderr).not.toContain("status ahead: started");
    const turns = (await logIn(repo, "s")) as { turn: string; prompt: string; state: string }[];
    expect(turns.map((t) => [t.turn, t.state])).toEqual([
      ["1", "done"],
      ["2", "open"],
    ]);
    expect(turns[1].prompt.startsWith("a long prompt xxx")).toBe(true);
  });
});
