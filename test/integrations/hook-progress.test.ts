import { chmodSync, existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { claude } from "./events.js";
import { expectQuiet, installedCommand, shellHook } from "./hook-helpers.js";

// A progress mark after each edit tool (Claude Code's PostToolUse) reads only the file the tool
// named into the turn's last mark. The marks are stored loose, so the next one edits them from
// Node: an agent's run of edits in one directory starts no git process after the first.
let sandbox: Sandbox;
let repo: Repo;
let shim: string;
let gitLog: string;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "src/a.js": "a0\n", "src/b.js": "b0\n", "lib/c.js": "c0\n" });
  // The real git, behind a script that notes each start (the hook finds git on its PATH).
  shim = sandbox.dir("shim");
  gitLog = path.join(sandbox.home, "git-starts.log");
  writeFileSync(path.join(shim, "git"), `#!/bin/sh\necho "$*" >> '${gitLog}'\nexec /usr/bin/git "$@"\n`);
  chmodSync(path.join(shim, "git"), 0o755);
});
afterEach(() => sandbox.cleanup());

const s = "s1";
/** Claude Code's PostToolUse after an Edit (code.claude.com/docs/en/hooks: tool_input, tool_response). */
const edited = (file: string) =>
  claude(repo.dir, s, "PostToolUse", {
    tool_name: "Edit",
    tool_input: { file_path: repo.path(file), old_string: "0", new_string: "1", replace_all: false },
    tool_response: { filePath: repo.path(file), success: true },
    tool_use_id: `toolu_${file}`,
  });

/** The event through the installed command, as Claude Code runs it; the git commands it started. */
function send(event: unknown): string[] {
  if (existsSync(gitLog)) writeFileSync(gitLog, "");
  const env = { PATH: `${shim}:/usr/bin:/bin`, CLAUDE_PROJECT_DIR: repo.dir };
  expectQuiet(shellHook(sandbox, installedCommand("claude-code"), event, repo.dir, env));
  return existsSync(gitLog) ? readFileSync(gitLog, "utf8").split("\n").filter(Boolean) : [];
}

describe("progress marks after edit tools", () => {
  it("edits the turn's last mark from Node, and still attributes exactly what the tools did", () => {
    // src/ already differs from HEAD when the turn begins: its before-snapshot wrote that tree.
    repo.write({ "src/new.js": "n0\n" });
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit" }));
    // Before the edit, a file there is checked against the before-snapshot from Node alone.
    const preEdit = claude(repo.dir, s, "PreToolUse", {
      tool_name: "Edit",
      tool_input: { file_path: repo.path("src/a.js"), old_string: "0", new_string: "1", replace_all: false },
      tool_use_id: "toolu_pre",
    });
    expect(send(preEdit)).toEqual([]);
    repo.write({ "src/a.js": "a1\n" });
    send(edited("src/a.js"));
    repo.write({ "src/b.js": "b1\n" });
    // The same directory as the last mark: everything it reads is loose, read from Node.
    expect(send(edited("src/b.js"))).toEqual([]);
    repo.write({ "lib/c.js": "c1\n" });
    send(edited("lib/c.js"));
    // After the last tool call, without a Stop (Esc): an edit the agent did not report.
    repo.write({ "src/b.js": "b2 by the user\n" });
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "next" }));
    send(claude(repo.dir, s, "Stop", { stop_hook_active: false, last_assistant_message: "ok" }));
    // The marks held a1, b1 and c1: only the user's later b2 is uncertain.
    const refused = repo.cli(["rewind", "--session", s, "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["src/b.js"]);
    const forced = repo.cli(["rewind", "--session", s, "--to", "1", "--force", "--json"]);
    expect(forced.status, forced.stderr).toBe(0);
    expect([repo.read("src/a.js"), repo.read("src/b.js"), repo.read("lib/c.js")]).toEqual([
      "a0\n",
      "b0\n",
      "c0\n",
    ]);
  });
});

describe("a change after the turn's last tool call", () => {
  /**
   * The person's save, seconds after the agent's edit of the file (while the agent writes its
   * answer), as its modification time says: a save at once would pass for a formatter hook's.
   */
  const savedLater = (file: string, content: string) => {
    repo.write({ [file]: content });
    const later = new Date(Date.now() + 30_000);
    utimesSync(repo.path(file), later, later);
  };
  /** A refused Edit: code.claude.com/docs/en/hooks, PostToolUseFailure (tool_input, error, is_interrupt). */
  const editFailed = (file: string, error = changedSinceRead) =>
    claude(repo.dir, s, "PostToolUseFailure", {
      tool_name: "Edit",
      tool_input: { file_path: repo.path(file), old_string: "0", new_string: "1", replace_all: false },
      tool_use_id: `toolu_failed_${file}`,
      error,
      is_interrupt: false,
    });
  const changedSinceRead =
    "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
  /** Claude Code's PostToolUse after a Bash call (code.claude.com/docs/en/hooks). */
  const ranBash = (command: string) =>
    claude(repo.dir, s, "PostToolUse", {
      tool_name: "Bash",
      tool_input: { command },
      tool_response: { stdout: "", stderr: "", interrupted: false },
      tool_use_id: "toolu_bash",
    });
  const preEdit = (file: string) =>
    claude(repo.dir, s, "PreToolUse", {
      tool_name: "Edit",
      tool_input: { file_path: repo.path(file), old_string: "0", new_string: "1", replace_all: false },
      tool_use_id: `toolu_pre_${file}`,
    });
  /** An edit tool's call as Claude Code reports it: PreToolUse, the write, PostToolUse. */
  const agentEdits = (file: string, content: string) => {
    send(preEdit(file));
    repo.write({ [file]: content });
    send(edited(file));
  };
  const stop = () =>
    claude(repo.dir, s, "Stop", { stop_hook_active: false, last_assistant_message: "Done." });
  /**
   * The project's own PostToolUse hook beside ghostcommit's: code.claude.com/docs/en/hooks-guide's
   * example runs prettier on the file an Edit or Write touched.
   */
  const formatterHook = (matcher = "Edit|MultiEdit|Write") => {
    const command = "jq -r '.tool_input.file_path' | xargs npx prettier --write";
    const hooks = { PostToolUse: [{ matcher, hooks: [{ type: "command", command }] }] };
    repo.write({ ".claude/settings.json": JSON.stringify({ hooks }, null, 2) });
  };

  it("is the person's, not the agent's: rewinding the turn asks before it reverts or deletes it", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js, run the generator" }));
    agentEdits("src/a.js", "a1\n");
    repo.write({ "gen/out.txt": "generated\n" }); // the Bash call's own work, before its mark
    send(ranBash("node gen.js"));
    // While the agent writes its answer, the person saves two files of their own.
    repo.write({ "NOTES.md": "my notes\n", "lib/c.js": "c0 and my tweak\n" });
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["NOTES.md", "gen/out.txt", "lib/c.js", "src/a.js"]);
    expect(turn.uncertain).toEqual(["NOTES.md", "lib/c.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1"]);
    expect(refused.status).toBe(3);
    expect(refused.stderr.trim()).toBe(
      `ghostcommit: rewind refused: 2 files were changed by none of session ${s}'s tool calls (after the last one that could have changed them, or before the agent edited them), so they may be a person's edit or another session's (NOTES.md, lib/c.js); nothing was changed; \`ghostcommit rewind --session ${s} --to 1 -- PATH…\` rewinds only the paths it names, --force overwrites`,
    );
    expect([repo.read("NOTES.md"), repo.read("lib/c.js")]).toEqual(["my notes\n", "c0 and my tweak\n"]);
    // The tools' work alone goes back; the person's stays.
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1", "src/a.js", "gen/out.txt");
    expect([repo.read("src/a.js"), repo.exists("gen/out.txt")]).toEqual(["a0\n", false]);
    expect(repo.read("NOTES.md")).toBe("my notes\n");
  });

  it("is the person's also in a file the agent's tools edited earlier in the turn", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js and b.js, run the tests" }));
    agentEdits("src/a.js", "a1\n");
    send(ranBash("npm test"));
    // The person touches up the agent's a.js while its next edit runs: that edit's mark reads b.js
    // alone. (Before a shell call's mark, such an edit could be the shell's: the agent's.)
    repo.write({ "src/a.js": "a1 and my fix\n" });
    agentEdits("src/b.js", "b1\n");
    // And after the last tool call, while the agent writes its answer, lib/c.js's earlier edit gets theirs too.
    agentEdits("lib/c.js", "c1\n");
    savedLater("lib/c.js", "c1 and my tweak\n");
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["lib/c.js", "src/a.js", "src/b.js"]);
    expect(turn.uncertain).toEqual(["lib/c.js", "src/a.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["lib/c.js", "src/a.js"]);
    expect(refused.json.afterLastTool).toEqual(["lib/c.js", "src/a.js"]);
    expect([repo.read("src/a.js"), repo.read("lib/c.js")]).toEqual(["a1 and my fix\n", "c1 and my tweak\n"]);
    // Said, it goes back all the same.
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1", "--force");
    expect([repo.read("src/a.js"), repo.read("src/b.js"), repo.read("lib/c.js")]).toEqual([
      "a0\n",
      "b0\n",
      "c0\n",
    ]);
  });

  it("is the person's in a turn where no tool call ran: what changed meanwhile is no tool's", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "explain a.js" }));
    // The agent only answers; the person edits a file and saves a new one meanwhile.
    repo.write({ "src/a.js": "a0 and mine\n", "NOTES.md": "mine\n" });
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.uncertain).toEqual(["NOTES.md", "src/a.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.afterLastTool).toEqual(["NOTES.md", "src/a.js"]);
    expect([repo.read("src/a.js"), repo.read("NOTES.md")]).toEqual(["a0 and mine\n", "mine\n"]);
  });

  // code.claude.com/docs/en/hooks: PostToolUseFailure carries tool_name, tool_input, tool_use_id,
  // error, is_interrupt; MCP tools are named mcp__<server>__<tool> and reported as any tool.
  it.each([
    [
      "a failed Bash call (Claude Code sends PostToolUseFailure instead)",
      "PostToolUseFailure",
      { tool_name: "Bash", tool_input: { command: "npm test" }, error: "Exit code 1", is_interrupt: false },
    ],
    [
      "an MCP tool (its PostToolUse marks the whole workspace)",
      "PostToolUse",
      {
        tool_name: "mcp__filesystem__write_file",
        tool_input: { path: "out/report.txt", content: "2 failed\n" },
        tool_response: { content: [{ type: "text", text: "Successfully wrote" }] },
      },
    ],
  ])("counts what %s wrote as the agent's", (_what, name, call) => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "run the tests" }));
    repo.write({ "out/report.txt": "2 failed\n" }); // the tool's own work, before its event
    send(claude(repo.dir, s, name, { ...call, tool_use_id: "toolu_call" }));
    repo.write({ "NOTES.md": "mine\n" }); // the person, while the agent answers
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["NOTES.md", "out/report.txt"]);
    expect(turn.uncertain).toEqual(["NOTES.md"]);
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1", "out/report.txt");
    expect([repo.exists("out/report.txt"), repo.read("NOTES.md")]).toEqual([false, "mine\n"]);
  });

  it("is the person's where the agent's edit of it failed: the file had changed since the agent read it", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js, b.js and c.js" }));
    agentEdits("src/a.js", "a1\n");
    agentEdits("src/b.js", "b1\n");
    // The person saves their own a.js and c.js; the agent's next edits of both are refused for it.
    repo.write({ "src/a.js": "a1 and my fix\n", "lib/c.js": "c0 and mine\n" });
    send(preEdit("src/a.js"));
    send(editFailed("src/a.js"));
    send(preEdit("lib/c.js"));
    send(editFailed("lib/c.js"));
    // A failed edit of b.js (its text was not there) leaves the agent's earlier edit its own.
    send(preEdit("src/b.js"));
    send(editFailed("src/b.js", "String to replace not found in file."));
    // As Claude Code does then, the agent reads a.js again and edits the person's version; a shell
    // call follows, whose mark reads every file: what the refusal showed stays the person's.
    agentEdits("src/a.js", "a1 and my fix\nagent again\n");
    send(ranBash("npm test"));
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["lib/c.js", "src/a.js", "src/b.js"]);
    expect(turn.uncertain).toEqual(["lib/c.js", "src/a.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.afterLastTool).toEqual(["lib/c.js", "src/a.js"]);
    expect([repo.read("src/a.js"), repo.read("lib/c.js")]).toEqual([
      "a1 and my fix\nagent again\n",
      "c0 and mine\n",
    ]);
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1", "src/b.js");
    expect(repo.read("src/b.js")).toBe("b0\n");
  });

  it("after an interrupt, keeps in doubt what a refused edit showed, and does not call the cut-off edit's file a person's", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js, then b.js" }));
    repo.write({ "src/a.js": "a0 and my fix\n" }); // the person's save, then the agent's refused edit
    send(preEdit("src/a.js"));
    send(editFailed("src/a.js"));
    agentEdits("src/a.js", "a0 and my fix\nagent\n");
    // The edit of b.js is cut off by Esc after it wrote: no PostToolUse, no Stop.
    send(preEdit("src/b.js"));
    repo.write({ "src/b.js": "b1\n" });
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "next" }));
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.uncertain).toEqual(["src/a.js", "src/b.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    // b.js's change may be the cut-off edit's own: in doubt, not said to be a person's.
    expect(refused.json.afterLastTool).toEqual(["src/a.js"]);
    expect(repo.read("src/a.js")).toBe("a0 and my fix\nagent\n");
  });

  it("says the same of a turn whose conversation ended after the interrupt (SessionEnd, no next prompt)", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js" }));
    agentEdits("src/a.js", "a1\n");
    repo.write({ "src/b.js": "b0 and mine\n" }); // after Esc, the person's edit
    // code.claude.com/docs/en/hooks: SessionEnd carries `reason` (here: the user exited).
    send(claude(repo.dir, s, "SessionEnd", { reason: "prompt_input_exit" }));
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect([refused.json.conflicts, refused.json.afterLastTool]).toEqual([["src/b.js"], ["src/b.js"]]);
    const log = sandbox.cli(repo.dir, ["log", "--session", s]);
    expect(log.stdout).toContain("ended: its agent moved on with the turn open");
    expect(log.stdout).not.toContain("an open turn's changed paths are known when it ends");
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1", "src/a.js");
    expect([repo.read("src/a.js"), repo.read("src/b.js")]).toEqual(["a0\n", "b0 and mine\n"]);
  });

  it("stays the agent's where another hook of the edit's event rewrote the file beside the mark (a formatter)", () => {
    formatterHook();
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js and b.js" }));
    agentEdits("src/a.js", "a1\n");
    // code.claude.com/docs/en/hooks-guide: a PostToolUse hook running prettier on the edited file,
    // run by Claude Code beside ghostcommit's: it writes just after the mark read the file.
    repo.write({ "src/a.js": "a1 formatted\n" });
    agentEdits("src/b.js", "b1\n");
    repo.write({ "src/b.js": "b1 formatted\n" });
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["src/a.js", "src/b.js"]);
    expect(turn.uncertain).toBeUndefined();
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1");
    expect([repo.read("src/a.js"), repo.read("src/b.js")]).toEqual(["a0\n", "b0\n"]);
  });

  it("is the person's where they saved it just after the agent's edit, with no other hook to rewrite it", () => {
    // Another hook of the project formats only what Write wrote; the agent's edits are Edits.
    formatterHook("Write");
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js, then b.js" }));
    agentEdits("src/a.js", "a1\n");
    repo.write({ "src/a.js": "a1 and mine\n" }); // the person's save, a moment after the edit
    agentEdits("src/b.js", "b1\n");
    repo.write({ "src/b.js": "b1 and mine\n" }); // and after the last tool call, before the stop
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.uncertain).toEqual(["src/a.js", "src/b.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, ["src/a.js", "src/b.js"]]);
    expect([repo.read("src/a.js"), repo.read("src/b.js")]).toEqual(["a1 and mine\n", "b1 and mine\n"]);
  });

  it("is the person's where they saved it before the agent's edit of it, or after an edit that never ran", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js, b.js and c.js" }));
    // The person saves a.js; the agent then reads their version and edits it: its PreToolUse saw it.
    repo.write({ "src/a.js": "a0 and mine\n" });
    agentEdits("src/a.js", "a0 and mine\nagent\n");
    // An edit of b.js that never ran (denied at the prompt, or blocked by another PreToolUse hook:
    // no PostToolUse follows), then the agent's edit of c.js, then the person's save of b.js.
    send(preEdit("src/b.js"));
    agentEdits("lib/c.js", "c1\n");
    savedLater("src/b.js", "b0 and mine\n");
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["lib/c.js", "src/a.js", "src/b.js"]);
    expect(turn.uncertain).toEqual(["src/a.js", "src/b.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json"]);
    expect([refused.status, refused.json.afterLastTool]).toEqual([3, ["src/a.js", "src/b.js"]]);
    expect([repo.read("src/a.js"), repo.read("src/b.js")]).toEqual(["a0 and mine\nagent\n", "b0 and mine\n"]);
  });

  it("stays the agent's where a formatter's rewrite got its next edit refused, or came just before an interrupt", () => {
    formatterHook();
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js twice, then b.js" }));
    agentEdits("src/a.js", "a1\n");
    repo.write({ "src/a.js": "a1 formatted\n" }); // a PostToolUse formatter beside the mark
    // Claude Code refuses the next edit ("…modified since read, either by the user or by a linter"),
    // and the agent edits the formatted version.
    send(preEdit("src/a.js"));
    send(editFailed("src/a.js"));
    agentEdits("src/a.js", "a2 formatted\n");
    agentEdits("src/b.js", "b1\n");
    repo.write({ "src/b.js": "b1 formatted\n" });
    // Esc: no Stop; the next prompt closes the turn.
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "next" }));
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["src/a.js", "src/b.js"]);
    expect(turn.uncertain).toBeUndefined();
  });

  it("keeps a person's save between two turns that both edited the file from a rewind of both", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js" }));
    agentEdits("src/a.js", "a1\n");
    send(stop());
    repo.write({ "src/a.js": "a1\nmine\n" }); // the person, between the turns
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit a.js again" }));
    agentEdits("src/a.js", "a2\nmine\n");
    send(stop());
    for (const dryRun of [["--dry-run"], []]) {
      const refused = sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1", "--json", ...dryRun]);
      expect([refused.status, refused.json.conflicts, refused.json.betweenTurns]).toEqual([
        3,
        ["src/a.js"],
        ["src/a.js"],
      ]);
    }
    expect(sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", "1"]).stderr).toContain(
      `1 file was changed by someone else between turns of session ${s}, which rewinding them would undo too (src/a.js)`,
    );
    expect(repo.read("src/a.js")).toBe("a2\nmine\n");
    // Turn 2 alone goes back to the person's version.
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "2");
    expect(repo.read("src/a.js")).toBe("a1\nmine\n");
  });

  it("stays the agent's where a tool call named the path after that mark (an edit that sent no PostToolUse)", () => {
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "edit both" }));
    agentEdits("src/a.js", "a1\n");
    // The second edit's PreToolUse came; it wrote, but its PostToolUse never did (it failed after).
    send(preEdit("src/b.js"));
    repo.write({ "src/b.js": "b1\n" });
    // So did a second edit of a.js, after the first one's mark.
    send(preEdit("src/a.js"));
    repo.write({ "src/a.js": "a2\n" });
    send(stop());
    const [turn] = sandbox.ok(repo.dir, "log", "--session", s);
    expect(turn.changed).toEqual(["src/a.js", "src/b.js"]);
    expect(turn.uncertain).toBeUndefined();
    sandbox.ok(repo.dir, "rewind", "--session", s, "--to", "1");
    expect([repo.read("src/a.js"), repo.read("src/b.js")]).toEqual(["a0\n", "b0\n"]);
  });

  it("before a Write of a new file asks git nothing, and a rewind removes what it wrote, an ignored file too", () => {
    repo.write({ ".gitignore": "*.local\n" });
    send(claude(repo.dir, s, "UserPromptSubmit", { prompt: "add config" }));
    const write = (file: string, phase: "PreToolUse" | "PostToolUse") =>
      claude(repo.dir, s, phase, {
        tool_name: "Write",
        tool_input: { file_path: repo.path(file), content: "new\n" },
        ...(phase === "PostToolUse" ? { tool_response: { filePath: repo.path(file), type: "create" } } : {}),
        tool_use_id: `toolu_${file}`,
      });
    for (const file of ["src/brand-new.js", "settings.local"]) {
      // Missing before the Write: missing before the turn's edit, whether or not git ignores it.
      expect(send(write(file, "PreToolUse")), file).toEqual([]);
      repo.write({ [file]: "new\n" });
      send(write(file, "PostToolUse"));
    }
    send(claude(repo.dir, s, "Stop", { stop_hook_active: false, last_assistant_message: "ok" }));
    const rewound = repo.cli(["rewind", "--session", s, "--to", "1", "--json"]);
    expect([rewound.status, rewound.stderr]).toEqual([0, ""]);
    expect(rewound.json.deleted.sort()).toEqual(["settings.local", "src/brand-new.js"]);
    expect([repo.exists("settings.local"), repo.exists("src/brand-new.js")]).toEqual([false, false]);
  });
});
