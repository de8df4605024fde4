import { endAction, type HookAction, type HookEvent, type Payload, obj, str } from "../event.js";

/** Gemini CLI tools that write files; both name the path `file_path`. */
const EDIT_TOOLS = new Set(["write_file", "replace"]);

/**
 * Gemini CLI hook payloads (Gemini CLI's hooks documentation). Turns are numbered by ghostcommit (1, 2, …).
 * Gemini parses stdout as JSON and shows anything else to the user, so every answer is `{}`.
 */
export function parseGemini(payload: Payload): HookEvent {
  const name = str(payload, "hook_event_name") ?? "";
  return {
    agent: "gemini",
    name,
    session: str(payload, "session_id"),
    cwd: str(payload, "cwd"),
    // Its file tools resolve a relative path against the directory Gemini CLI was started in.
    pathsFrom: "project",
    tool: str(payload, "tool_name"),
    subagent: false,
    action: geminiAction(name, payload),
    reply: "{}",
  };
}

function geminiAction(name: string, payload: Payload): HookAction {
  switch (name) {
    case "BeforeAgent":
      return { kind: "begin", prompt: str(payload, "prompt") ?? "" };
    case "BeforeTool": {
      const input = obj(payload, "tool_input");
      const file = EDIT_TOOLS.has(str(payload, "tool_name") ?? "")
        ? (str(input, "file_path") ?? str(input, "absolute_path"))
        : undefined;
      return file ? { kind: "touch", paths: [file], before: true } : { kind: "none" };
    }
    case "AfterTool": {
      const tool = str(payload, "tool_name") ?? "";
      const input = obj(payload, "tool_input");
      const file = EDIT_TOOLS.has(tool)
        ? (str(input, "file_path") ?? str(input, "absolute_path"))
        : undefined;
      if (file) return { kind: "progress", paths: [file] };
      return tool === "run_shell_command" ? { kind: "progress" } : { kind: "none" };
    }
    case "AfterAgent": {
      // After another hook blocks the answer, Gemini (since 0.35, client.ts) fires BeforeAgent
      // again with the hook's reason as the prompt, then this AfterAgent (stop_hook_active) with the
      // user's prompt: naming it lets the retry's turn join the turn of that prompt.
      const end = endAction(payload);
      const prompt = str(payload, "prompt");
      return end.kind === "end" && end.extend && prompt !== undefined ? { ...end, prompt } : end;
    }
    // /clear, exit or logout: a turn still open (Ctrl-C, which fires no AfterAgent) will never end;
    // Gemini does not wait for this hook on exit, so it only marks the turn over (no snapshot).
    case "SessionEnd":
      return { kind: "abandon" };
    default:
      return { kind: "none" };
  }
}
