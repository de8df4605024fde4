import { type HookAction, type HookEvent, obj, type Payload, str } from "../event.js";

/** Cursor sends `conversation_id`/`generation_id` where Claude Code and Codex send `session_id`. */
export function isCursorPayload(payload: Payload): boolean {
  return str(payload, "conversation_id") !== undefined && str(payload, "session_id") === undefined;
}

/** What Cursor expects on stdout: it must be told explicitly to let the prompt through. */
export const CURSOR_CONTINUE = '{"continue":true}';

/**
 * Cursor hook payloads (Cursor's hooks documentation): session = `conversation_id`, turn = `generation_id`,
 * workspace = `workspace_roots[0]`. Claude-style event names are accepted too, for Cursor running
 * Claude Code hooks ("third-party configs").
 */
export function parseCursor(payload: Payload): HookEvent {
  const name = str(payload, "hook_event_name") ?? "";
  const roots = payload.workspace_roots;
  const root = Array.isArray(roots) && typeof roots[0] === "string" && roots[0] ? roots[0] : undefined;
  const others = root
    ? (roots as unknown[]).slice(1).filter((r): r is string => typeof r === "string" && r !== "")
    : [];
  const action = cursorAction(name, payload);
  return {
    agent: "cursor",
    name,
    session: str(payload, "conversation_id"),
    cwd: str(payload, "cwd") ?? root,
    projectDir: root,
    ...(others.length > 0 ? { otherRoots: others } : {}),
    tool: str(payload, "tool_name"),
    subagent: false,
    action,
    reply: cursorReply(name),
  };
}

function cursorAction(name: string, payload: Payload): HookAction {
  switch (name) {
    case "beforeSubmitPrompt":
    case "UserPromptSubmit":
      return {
        kind: "begin",
        turn: str(payload, "generation_id"),
        prompt: str(payload, "prompt") ?? "",
      };
    case "afterFileEdit": {
      const file = str(payload, "file_path");
      // Sent after the write: the file's earlier content is already gone.
      return file ? { kind: "touch", paths: [file], edited: true } : { kind: "none" };
    }
    // Effects unknown: the whole workspace is read.
    case "afterShellExecution":
    case "afterMCPExecution":
      return { kind: "progress" };
    // The Delete tool's (installed with that matcher), sent after the file is gone; one that
    // failed (`tool_output` an error) deleted nothing.
    case "postToolUse": {
      if (str(payload, "tool_name") !== "Delete") return { kind: "none" };
      const file = str(jsonObject(payload, "tool_input"), "file_path");
      const output = jsonObject(payload, "tool_output");
      const failed = output !== undefined && (output.error !== undefined || output.deleted === false);
      return file && !failed ? { kind: "touch", paths: [file], edited: true } : { kind: "none" };
    }
    case "stop":
    case "Stop": {
      const turn = str(payload, "generation_id");
      return turn ? { kind: "end", turn } : { kind: "end" };
    }
    default:
      return { kind: "none" };
  }
}

/** An object field, also when sent as a JSON string (Cursor sends some tools' input so). */
function jsonObject(payload: Payload, key: string): Payload | undefined {
  const value = payload[key];
  if (typeof value !== "string") return obj(payload, key);
  try {
    return obj({ value: JSON.parse(value) }, "value");
  } catch {
    return undefined;
  }
}

/** `{"continue":true}` before a prompt (any other answer could block it), `{}` otherwise. */
export function cursorReply(name: string): string {
  return name === "beforeSubmitPrompt" || name === "UserPromptSubmit" || name === "" ? CURSOR_CONTINUE : "{}";
}
