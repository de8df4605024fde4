import {
  endAction,
  fromSubagent,
  type HookAction,
  type HookEvent,
  type Payload,
  obj,
  str,
} from "../event.js";
import { isCursorPayload, parseCursor } from "./cursor.js";

/** Claude Code tools that edit files, and where each keeps the path. */
const EDIT_TOOLS: Record<string, string> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

/**
 * Claude Code hook payloads (Claude Code's hooks reference). Cursor can run Claude Code hooks from
 * `.claude/settings*.json`, so a payload with Cursor's fields is handed to the Cursor parser.
 */
export function parseClaude(payload: Payload): HookEvent {
  if (isCursorPayload(payload)) return parseCursor(payload);
  const name = str(payload, "hook_event_name") ?? "";
  return {
    agent: "claude-code",
    name,
    session: str(payload, "session_id"),
    cwd: str(payload, "cwd"),
    tool: str(payload, "tool_name"),
    subagent: fromSubagent(payload),
    action: claudeAction(name, payload),
    // stdout of UserPromptSubmit and SessionStart reaches the model; elsewhere it is unused.
    reply: "",
  };
}

function claudeAction(name: string, payload: Payload): HookAction {
  switch (name) {
    case "UserPromptSubmit":
      return { kind: "begin", prompt: str(payload, "prompt") ?? "" };
    case "PreToolUse": {
      const key = EDIT_TOOLS[str(payload, "tool_name") ?? ""];
      const file = key
        ? (str(obj(payload, "tool_input"), key) ?? str(obj(payload, "tool_input"), "file_path"))
        : undefined;
      return file ? { kind: "touch", paths: [file], before: true } : { kind: "none" };
    }
    // A failed call (Claude Code sends PostToolUseFailure instead) may have changed files too,
    // except an edit tool's: it refuses before writing (text not found, the file changed since
    // it was read), so what its file shows then is not its work.
    case "PostToolUse":
    case "PostToolUseFailure": {
      const tool = str(payload, "tool_name") ?? "";
      const key = EDIT_TOOLS[tool];
      const file = key
        ? (str(obj(payload, "tool_input"), key) ?? str(obj(payload, "tool_input"), "file_path"))
        : undefined;
      if (file && name === "PostToolUseFailure") return { kind: "progress", paths: [file], unwritten: true };
      if (file) return { kind: "progress", paths: [file] };
      // A shell's or an MCP tool's effects are unknown: the whole workspace is read.
      return tool === "Bash" || tool.startsWith("mcp__") ? { kind: "progress" } : { kind: "none" };
    }
    case "Stop":
      return endAction(payload);
    // Replaces Stop when the turn ends on an API error.
    case "StopFailure":
      return { kind: "end" };
    // /clear, exit or logout: a turn still open (Esc) will never stop. The 1.5 s budget all
    // SessionEnd hooks share leaves no time for a snapshot, only to mark the turn over.
    case "SessionEnd":
      return { kind: "abandon" };
    // SessionStart: the next prompt begins a turn.
    default:
      return { kind: "none" };
  }
}
