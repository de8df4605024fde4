/**
 * Hook payloads in the shapes the agents document (their hooks references), with every common field
 * they send, so the adapters are tested against what arrives and not against what they read.
 */

export function claude(cwd: string, session: string, event: string, extra: Record<string, unknown> = {}) {
  return {
    session_id: session,
    transcript_path: `/home/u/.claude/projects/p/${session}.jsonl`,
    cwd,
    permission_mode: "default",
    hook_event_name: event,
    prompt_id: "a1b2c3",
    effort: "medium",
    ...extra,
  };
}

export const claudeEvents = {
  sessionStart: (cwd: string, s: string) =>
    claude(cwd, s, "SessionStart", { source: "startup", model: "claude-x" }),
  prompt: (cwd: string, s: string, prompt: string) => claude(cwd, s, "UserPromptSubmit", { prompt }),
  write: (cwd: string, s: string, file: string, content = "x") =>
    claude(cwd, s, "PreToolUse", {
      tool_name: "Write",
      tool_input: { file_path: file, content },
      tool_use_id: "toolu_01",
    }),
  /** The PostToolUse Claude Code sends once that Write is done. */
  wrote: (cwd: string, s: string, file: string, content = "x") =>
    claude(cwd, s, "PostToolUse", {
      tool_name: "Write",
      tool_input: { file_path: file, content },
      tool_response: { filePath: file, success: true },
      tool_use_id: "toolu_01",
    }),
  edit: (cwd: string, s: string, file: string) =>
    claude(cwd, s, "PreToolUse", {
      tool_name: "Edit",
      tool_input: { file_path: file, old_string: "a", new_string: "b", replace_all: false },
      tool_use_id: "toolu_02",
    }),
  notebook: (cwd: string, s: string, file: string) =>
    claude(cwd, s, "PreToolUse", {
      tool_name: "NotebookEdit",
      tool_input: { notebook_path: file, new_source: "print(1)", cell_id: "c1", edit_mode: "replace" },
      tool_use_id: "toolu_03",
    }),
  bash: (cwd: string, s: string, command: string) =>
    claude(cwd, s, "PreToolUse", { tool_name: "Bash", tool_input: { command }, tool_use_id: "toolu_04" }),
  /** PostToolUse after a Bash call: the progress mark of a shell tool's work (any files it changed). */
  ranBash: (cwd: string, s: string, command: string) =>
    claude(cwd, s, "PostToolUse", {
      tool_name: "Bash",
      tool_input: { command },
      tool_response: { stdout: "", stderr: "", interrupted: false },
      tool_use_id: "toolu_05",
    }),
  stop: (cwd: string, s: string) =>
    claude(cwd, s, "Stop", {
      stop_hook_active: false,
      last_assistant_message: "Done.",
      background_tasks: [],
      session_crons: [],
    }),
  sessionEnd: (cwd: string, s: string) => claude(cwd, s, "SessionEnd", { reason: "prompt_input_exit" }),
};

/** The same event as sent from inside a subagent. */
export function subagent<T extends object>(event: T): T & { agent_id: string; agent_type: string } {
  return { ...event, agent_id: "agent-7", agent_type: "general-purpose" };
}

export function codex(cwd: string, session: string, event: string, extra: Record<string, unknown> = {}) {
  return {
    session_id: session,
    transcript_path: null,
    cwd,
    hook_event_name: event,
    model: "gpt-5-codex",
    permission_mode: "default",
    ...extra,
  };
}

export function cursor(
  root: string,
  conversation: string,
  event: string,
  extra: Record<string, unknown> = {},
) {
  return {
    conversation_id: conversation,
    generation_id: "gen-0",
    hook_event_name: event,
    model: "claude-4-sonnet",
    cursor_version: "1.7.2",
    workspace_roots: [root],
    user_email: "dev@example.com",
    ...extra,
  };
}

export function gemini(cwd: string, session: string, event: string, extra: Record<string, unknown> = {}) {
  return {
    session_id: session,
    transcript_path: `/home/u/.gemini/tmp/${session}.json`,
    cwd,
    hook_event_name: event,
    timestamp: new Date().toISOString(),
    ...extra,
  };
}

/** An apply_patch text that changes one line of one file (Codex's patch format). */
export const updatePatch = (file: string, from: string, to: string): string =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

export const PATCH = [
  "*** Begin Patch",
  "*** Add File: docs/new.md",
  "+# New",
  "*** Update File: src/app.js",
  "*** Move to: src/main.js",
  "@@",
  "-v1",
  "+v2",
  "*** Delete File: old.txt",
  "*** End Patch",
  "",
].join("\n");
