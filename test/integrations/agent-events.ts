import { claude, codex, cursor, gemini, updatePatch } from "./events.js";

/**
 * One agent turn's events, per adapter, in the shapes the agents document (INTEGRATIONS.md):
 * Claude Code — code.claude.com/docs/en/hooks ("PostToolUse: adds tool_response", "Stop:
 * stop_hook_active", StopFailure); Codex — developers.openai.com/codex/hooks (turn_id, PostToolUse,
 * Interrupt; builds before openai/codex#16732 report apply_patch as `Bash` with the patch in
 * `tool_input.command`); Cursor — cursor.com/docs/agent/hooks (`afterFileEdit` fires after the
 * write, `workspace_roots`); Gemini CLI — google-gemini/gemini-cli docs/hooks (BeforeTool,
 * AfterTool, AfterAgent with `stop_hook_active`).
 */
export interface AgentScript {
  agent: "claude-code" | "codex" | "cursor" | "gemini";
  /** The turn id `log` shows for the n-th prompt. */
  turnId(n: number): string;
  begin(cwd: string, s: string, n: number, root: string): unknown;
  /** Before an edit tool writes `file` (null: the agent has no such event). */
  pre(cwd: string, s: string, file: string, root: string): unknown | null;
  /** After an edit tool wrote `file`. */
  post(cwd: string, s: string, file: string, root: string): unknown;
  /** After a shell tool ran (null: no such event). */
  shell(cwd: string, s: string, command: string, root: string): unknown | null;
  /** The end of a turn; `blockedBefore`: the stop after one another hook blocked (null: none). */
  stop(cwd: string, s: string, root: string, blockedBefore?: boolean): unknown | null;
}

const patch = (file: string) => updatePatch(file, "a", "b");

export const SCRIPTS: AgentScript[] = [
  {
    agent: "claude-code",
    turnId: (n) => String(n),
    begin: (cwd, s, n) => claude(cwd, s, "UserPromptSubmit", { prompt: `prompt ${n}` }),
    pre: (cwd, s, file) =>
      claude(cwd, s, "PreToolUse", {
        tool_name: "Write",
        tool_input: { file_path: file, content: "x" },
        tool_use_id: "t1",
      }),
    post: (cwd, s, file) =>
      claude(cwd, s, "PostToolUse", {
        tool_name: "Write",
        tool_input: { file_path: file, content: "x" },
        tool_response: { filePath: file, success: true },
        tool_use_id: "t1",
        duration_ms: 12,
      }),
    shell: (cwd, s, command) =>
      claude(cwd, s, "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command },
        tool_response: { stdout: "", stderr: "", interrupted: false },
        tool_use_id: "t2",
        duration_ms: 40,
      }),
    stop: (cwd, s, _root, blocked = false) =>
      claude(cwd, s, "Stop", {
        stop_hook_active: blocked,
        last_assistant_message: "Done.",
        background_tasks: [],
      }),
  },
  {
    agent: "codex",
    turnId: (n) => `turn-${n}`,
    begin: (cwd, s, n) => codex(cwd, s, "UserPromptSubmit", { turn_id: `turn-${n}`, prompt: `prompt ${n}` }),
    // An older build: apply_patch arrives as a Bash call whose command holds the patch.
    pre: (cwd, s, file) =>
      codex(cwd, s, "PreToolUse", {
        tool_name: "Bash",
        tool_use_id: "call_1",
        tool_input: { command: `apply_patch <<'EOF'\n${patch(file)}EOF\n` },
      }),
    post: (cwd, s, file) =>
      codex(cwd, s, "PostToolUse", {
        tool_name: "apply_patch",
        tool_use_id: "call_1",
        tool_input: { command: patch(file) },
        tool_response: "Success. Updated the following files",
      }),
    shell: (cwd, s, command) =>
      codex(cwd, s, "PostToolUse", {
        tool_name: "Bash",
        tool_use_id: "call_2",
        tool_input: { command },
        tool_response: "",
      }),
    stop: (cwd, s, _root, blocked = false) =>
      codex(cwd, s, "Stop", { stop_hook_active: blocked, last_assistant_message: "done" }),
  },
  {
    agent: "cursor",
    turnId: (n) => `gen-${n}`,
    begin: (_cwd, s, n, root) =>
      cursor(root, s, "beforeSubmitPrompt", {
        generation_id: `gen-${n}`,
        prompt: `prompt ${n}`,
        attachments: [],
      }),
    pre: () => null,
    post: (_cwd, s, file, root) =>
      cursor(root, s, "afterFileEdit", { file_path: file, edits: [{ old_string: "a", new_string: "b" }] }),
    shell: () => null,
    // A stop hook's followup_message becomes the next prompt: Cursor has no blocked stop.
    stop: (_cwd, s, root, blocked = false) =>
      blocked ? null : cursor(root, s, "stop", { status: "completed", loop_count: 0 }),
  },
  {
    agent: "gemini",
    turnId: (n) => String(n),
    begin: (cwd, s, n) => gemini(cwd, s, "BeforeAgent", { prompt: `prompt ${n}` }),
    pre: (cwd, s, file) =>
      gemini(cwd, s, "BeforeTool", {
        tool_name: "write_file",
        tool_input: { file_path: file, content: "x" },
      }),
    post: (cwd, s, file) =>
      gemini(cwd, s, "AfterTool", {
        tool_name: "write_file",
        tool_input: { file_path: file, content: "x" },
        tool_response: { llmContent: "ok" },
      }),
    shell: (cwd, s, command) =>
      gemini(cwd, s, "AfterTool", {
        tool_name: "run_shell_command",
        tool_input: { command },
        tool_response: {},
      }),
    stop: (cwd, s, _root, blocked = false) =>
      gemini(cwd, s, "AfterAgent", { prompt: "p", prompt_response: "done", stop_hook_active: blocked }),
  },
];
