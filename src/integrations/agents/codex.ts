import { fromSubagent, type HookAction, type HookEvent, type Payload, obj, str } from "../event.js";

const PATCH_LINE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/;

/** Paths an `apply_patch` patch adds, updates, deletes or moves to, in order, without repeats. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split("\n")) {
    const match = PATCH_LINE.exec(line.replace(/\r$/, ""));
    if (match && !paths.includes(match[1])) paths.push(match[1]);
  }
  return paths;
}

/** The raw patch text of an `apply_patch` call: `tool_input.command` (a string, or argv). */
function patchText(input: Payload | undefined): string {
  for (const key of ["command", "input", "patch"]) {
    const value = input?.[key];
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return value.filter((v) => typeof v === "string").join("\n");
  }
  return "";
}

/**
 * Codex hook payloads (Codex's hooks documentation): session = `session_id`, turn = `turn_id`.
 * Nothing is printed: plain stdout becomes model context on UserPromptSubmit and is an error on Stop.
 */
export function parseCodex(payload: Payload): HookEvent {
  const name = str(payload, "hook_event_name") ?? "";
  return {
    agent: "codex",
    name,
    session: str(payload, "session_id"),
    cwd: str(payload, "cwd"),
    subagent: fromSubagent(payload),
    action: codexAction(name, payload),
    reply: "",
  };
}

function codexAction(name: string, payload: Payload): HookAction {
  switch (name) {
    case "UserPromptSubmit":
      return { kind: "begin", turn: str(payload, "turn_id"), prompt: str(payload, "prompt") ?? "" };
    case "PreToolUse": {
      const input = obj(payload, "tool_input");
      const file = str(input, "file_path");
      // Older builds only report Bash: a shell call of apply_patch carries the patch in its command.
      const text = patchText(input);
      const isPatch = str(payload, "tool_name") === "apply_patch" || text.includes("*** Begin Patch");
      const paths = isPatch ? patchPaths(text) : file ? [file] : [];
      return paths.length > 0 ? { kind: "touch", paths } : { kind: "none" };
    }
    // Interrupt (newest builds) ends a turn that Stop will not.
    case "Stop":
    case "Interrupt":
      return { kind: "end" };
    default:
      return { kind: "none" };
  }
}
