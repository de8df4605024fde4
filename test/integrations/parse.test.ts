import { describe, expect, it } from "vitest";
import { parseClaude } from "../../src/integrations/agents/claude.js";
import { parseCodex, patchPaths } from "../../src/integrations/agents/codex.js";
import { parseCursor } from "../../src/integrations/agents/cursor.js";
import { parseGemini } from "../../src/integrations/agents/gemini.js";
import { promptPreview } from "../../src/util/format.js";
import { nextTurnNumber } from "../../src/integrations/hook.js";
import { workspacePath } from "../../src/integrations/hook-paths.js";
import { claudeEvents, codex, cursor, gemini, PATCH, subagent, updatePatch } from "./events.js";

const ws = "/w/proj";

describe("Claude Code events", () => {
  it("UserPromptSubmit begins a turn with the prompt as sent (the session stores its preview) and prints nothing", () => {
    const e = parseClaude(claudeEvents.prompt(ws, "s1", "fix   the\nbug"));
    expect(e).toMatchObject({ agent: "claude-code", session: "s1", cwd: ws, subagent: false, reply: "" });
    expect(e.action).toEqual({ kind: "begin", prompt: "fix   the\nbug" });
  });

  it("PreToolUse touches file_path for Write/Edit and notebook_path for NotebookEdit, nothing for Bash", () => {
    expect(parseClaude(claudeEvents.write(ws, "s", "/w/proj/a.txt")).action).toEqual({
      kind: "touch",
      paths: ["/w/proj/a.txt"],
      before: true,
    });
    expect(parseClaude(claudeEvents.edit(ws, "s", "/w/proj/b.txt")).action).toEqual({
      kind: "touch",
      paths: ["/w/proj/b.txt"],
      before: true,
    });
    expect(parseClaude(claudeEvents.notebook(ws, "s", "/w/proj/n.ipynb")).action).toEqual({
      kind: "touch",
      paths: ["/w/proj/n.ipynb"],
      before: true,
    });
    expect(parseClaude(claudeEvents.bash(ws, "s", "rm -rf build")).action.kind).toBe("none");
  });

  it("Stop ends the turn; SessionEnd marks an open one over; SessionStart does nothing", () => {
    expect(parseClaude(claudeEvents.stop(ws, "s")).action.kind).toBe("end");
    expect(parseClaude(claudeEvents.sessionStart(ws, "s")).action.kind).toBe("none");
    expect(parseClaude(claudeEvents.sessionEnd(ws, "s")).action.kind).toBe("abandon");
  });

  it("marks subagent payloads (agent_id) but not a main thread started with --agent (agent_type only)", () => {
    expect(parseClaude(subagent(claudeEvents.stop(ws, "s"))).subagent).toBe(true);
    expect(parseClaude({ ...claudeEvents.stop(ws, "s"), agent_type: "reviewer" }).subagent).toBe(false);
  });

  it("hands a Cursor payload to the Cursor parser (Cursor running Claude Code hooks)", () => {
    const e = parseClaude(cursor(ws, "conv", "beforeSubmitPrompt", { generation_id: "g9", prompt: "hi" }));
    expect(e).toMatchObject({ agent: "cursor", session: "conv", cwd: ws, reply: '{"continue":true}' });
    expect(e.action).toEqual({ kind: "begin", turn: "g9", prompt: "hi" });
  });
});

describe("Codex events", () => {
  it("apply_patch touches every added, updated, moved-to and deleted path", () => {
    expect(patchPaths(PATCH)).toEqual(["docs/new.md", "src/app.js", "src/main.js", "old.txt"]);
    const e = parseCodex(
      codex(ws, "s", "PreToolUse", {
        turn_id: "t1",
        tool_name: "apply_patch",
        tool_use_id: "c",
        tool_input: { command: PATCH },
      }),
    );
    expect(e.action).toEqual({
      kind: "touch",
      paths: ["docs/new.md", "src/app.js", "src/main.js", "old.txt"],
    });
    expect(e.reply).toBe("");
  });

  it("reads a patch carried by a shell call too (builds that report only Bash)", () => {
    const command = ["bash", "-lc", `apply_patch <<'EOF'\n${PATCH}EOF`];
    const e = parseCodex(codex(ws, "s", "PreToolUse", { tool_name: "Bash", tool_input: { command } }));
    expect(e.action).toMatchObject({ kind: "touch" });
  });

  it("takes a patch's paths from the directory it is applied in: `cd DIR &&` or the call's workdir", () => {
    const one = updatePatch("a.txt", "a", "b");
    const paths = (tool_input: Record<string, unknown>) =>
      parseCodex(codex(ws, "s", "PreToolUse", { tool_name: "Bash", tool_input })).action;
    const script = (prefix: string) => ({
      command: ["bash", "-lc", `${prefix}apply_patch <<'EOF'\n${one}EOF`],
    });
    expect(paths(script(""))).toEqual({ kind: "touch", paths: ["a.txt"] });
    expect(paths(script("cd pkg/web && "))).toEqual({ kind: "touch", paths: ["pkg/web/a.txt"] });
    expect(paths(script("cd 'my dir' && "))).toEqual({ kind: "touch", paths: ["my dir/a.txt"] });
    expect(paths(script('set -e; cd "../x" && '))).toEqual({ kind: "touch", paths: ["../x/a.txt"] });
    expect(paths(script("cd /abs/dir && "))).toEqual({ kind: "touch", paths: ["/abs/dir/a.txt"] });
    expect(paths({ command: ["apply_patch", one], workdir: "/w/proj/sub" })).toEqual({
      kind: "touch",
      paths: ["/w/proj/sub/a.txt"],
    });
    expect(paths({ ...script("cd lib && "), workdir: "/w/proj/sub" })).toEqual({
      kind: "touch",
      paths: ["/w/proj/sub/lib/a.txt"],
    });
    // A cd that is not the patch's (it comes after) leaves the paths where they are.
    expect(paths({ command: ["bash", "-lc", `apply_patch <<'EOF'\n${one}EOF\ncd elsewhere && ls`] })).toEqual(
      {
        kind: "touch",
        paths: ["a.txt"],
      },
    );
  });

  it("UserPromptSubmit begins turn_id; Stop ends; both print nothing", () => {
    const begin = parseCodex(codex(ws, "s", "UserPromptSubmit", { turn_id: "turn-3", prompt: "go" }));
    expect(begin.action).toEqual({ kind: "begin", turn: "turn-3", prompt: "go" });
    const stop = parseCodex(codex(ws, "s", "Stop", { turn_id: "turn-3", stop_hook_active: false }));
    expect(stop).toMatchObject({ action: { kind: "end" }, reply: "" });
  });
});

describe("Cursor events", () => {
  it("answers each event with the JSON Cursor requires", () => {
    const root = "/w/proj";
    expect(parseCursor(cursor(root, "c", "beforeSubmitPrompt", { prompt: "p", attachments: [] })).reply).toBe(
      '{"continue":true}',
    );
    const edit = parseCursor(cursor(root, "c", "afterFileEdit", { file_path: "/w/proj/a.ts", edits: [] }));
    expect(edit).toMatchObject({ reply: "{}", action: { kind: "touch", paths: ["/w/proj/a.ts"] } });
    const stop = parseCursor(cursor(root, "c", "stop", { status: "completed", loop_count: 0 }));
    expect(stop).toMatchObject({ reply: "{}", action: { kind: "end" }, cwd: root, session: "c" });
  });

  // termaxa/termaxa#106 (payloads captured from Cursor 3.11): `tool_input.file_path` absolute,
  // `tool_output` a JSON string, `{"file_path":…,"deleted":true}` for a delete.
  it("takes a Delete's path from its input, also sent as a JSON string, and nothing from a failed one", () => {
    const root = "/w/proj";
    const deleted = (input: unknown, output: string) =>
      parseCursor(
        cursor(root, "c", "postToolUse", { tool_name: "Delete", tool_input: input, tool_output: output }),
      ).action;
    const done = JSON.stringify({ file_path: "/w/proj/a.ts", deleted: true });
    const touched = { kind: "touch", paths: ["/w/proj/a.ts"], edited: true };
    expect(deleted({ file_path: "/w/proj/a.ts" }, done)).toEqual(touched);
    expect(deleted(JSON.stringify({ file_path: "/w/proj/a.ts" }), done)).toEqual(touched);
    expect(deleted({ file_path: "/w/proj/a.ts" }, JSON.stringify({ error: "not found" }))).toEqual({
      kind: "none",
    });
    const write = cursor(root, "c", "postToolUse", {
      tool_name: "Write",
      tool_input: { file_path: "/w/proj/a.ts" },
    });
    expect(parseCursor(write).action).toEqual({ kind: "none" });
  });
});

describe("Gemini CLI events", () => {
  it("BeforeAgent begins, BeforeTool write_file/replace touches, AfterAgent ends, always answering {}", () => {
    expect(parseGemini(gemini(ws, "g", "BeforeAgent", { prompt: "p" })).action).toEqual({
      kind: "begin",
      prompt: "p",
    });
    const tool = (tool_name: string) =>
      parseGemini(
        gemini(ws, "g", "BeforeTool", { tool_name, tool_input: { file_path: "/w/proj/x", content: "" } }),
      );
    expect(tool("write_file").action).toEqual({ kind: "touch", paths: ["/w/proj/x"], before: true });
    expect(tool("replace").action).toEqual({ kind: "touch", paths: ["/w/proj/x"], before: true });
    expect(tool("run_shell_command").action.kind).toBe("none");
    const end = parseGemini(
      gemini(ws, "g", "AfterAgent", { prompt: "p", prompt_response: "r", stop_hook_active: false }),
    );
    expect(end).toMatchObject({ action: { kind: "end" }, reply: "{}" });
  });
});

describe("helpers", () => {
  it("numbers turns after the highest numeric id, rewound ones included", () => {
    expect(nextTurnNumber([])).toBe(1);
    expect(nextTurnNumber(["1", "2", "3"])).toBe(4);
    expect(nextTurnNumber(["2", "x", "10"])).toBe(11);
  });

  it("maps hook paths into the workspace and rejects outside and .git paths", () => {
    expect(workspacePath("/w/proj", "/w/proj", "/w/proj", "/w/proj/src/a.ts")).toBe("src/a.ts");
    expect(workspacePath("/w/proj", "/w/proj", "/w/proj/sub", "b.ts")).toBe("sub/b.ts");
    expect(workspacePath("/real/proj", "/w/proj", "/w/proj", "/w/proj/c.ts")).toBe("c.ts");
    expect(workspacePath("/w/proj", "/w/proj", "/w/proj", "/etc/passwd")).toBeNull();
    expect(workspacePath("/w/proj", "/w/proj", "/w/proj", "/w/proj/.git/config")).toBe(".git");
    expect(workspacePath("/w/proj", "/w/proj", "/w/proj", "/w/proj")).toBeNull();
  });

  it("keeps prompt previews short", () => {
    expect(promptPreview("x".repeat(500))).toHaveLength(200);
    expect(promptPreview(" \n ")).toBe("");
  });
});
