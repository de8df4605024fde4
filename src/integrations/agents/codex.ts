import path from "node:path";
import {
  endAction,
  fromSubagent,
  type HookAction,
  type HookEvent,
  type Payload,
  obj,
  str,
} from "../event.js";

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
 * The directory a patch's relative paths are in, relative to the event's `cwd` (or absolute): the
 * shell call's `workdir`, then a `cd DIR &&` before `apply_patch` in its script, the form Codex
 * itself recognizes (codex-rs apply-patch). "" for the event's `cwd`.
 */
function patchDir(workdir: string | undefined, script: string): string {
  const cd = /(?:^|[\n;&|]\s*)cd\s+(?:'([^']*)'|"([^"\\$`]*)"|([^\s;&|'"\\$`]+))\s*&&\s*apply_patch\b/.exec(
    script,
  );
  let inScript = cd ? (cd[1] ?? cd[2] ?? cd[3]) : "";
  // Unquoted, `~` is the home directory the agent's shell has, which the hook inherits.
  if (cd?.[3] && /^~(\/|$)/.test(inScript) && process.env.HOME)
    inScript = process.env.HOME + inScript.slice(1);
  const base = workdir ?? "";
  const dir = inScript === "" ? base : path.isAbsolute(inScript) ? inScript : path.join(base, inScript);
  return dir === "." ? "" : dir;
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
    tool: str(payload, "tool_name"),
    subagent: fromSubagent(payload),
    action: codexAction(name, payload),
    reply: "",
  };
}

/**
 * The paths a tool call edits, or null for a shell call whose effects are unknown. Older builds
 * report `apply_patch` as `Bash`, with the patch in the shell command (`apply_patch <<'EOF' …`).
 */
function editedPaths(payload: Payload): string[] | null {
  const input = obj(payload, "tool_input");
  const tool = str(payload, "tool_name");
  const text = patchText(input);
  if (tool === "apply_patch" || /(^|\s)apply_patch\b/.test(text) || text.includes("*** Begin Patch")) {
    const dir = patchDir(str(input, "workdir"), text);
    return patchPaths(text).map((p) => (dir === "" || path.isAbsolute(p) ? p : path.join(dir, p)));
  }
  const file = str(input, "file_path");
  if (file) return [file];
  return tool === "Bash" || tool === "shell" || tool === "local_shell" ? null : [];
}

function codexAction(name: string, payload: Payload): HookAction {
  switch (name) {
    case "UserPromptSubmit":
      return { kind: "begin", turn: str(payload, "turn_id"), prompt: str(payload, "prompt") ?? "" };
    case "PreToolUse": {
      const paths = editedPaths(payload) ?? [];
      return paths.length > 0 ? { kind: "touch", paths } : { kind: "none" };
    }
    case "PostToolUse": {
      const paths = editedPaths(payload);
      if (paths === null) return { kind: "progress" };
      return paths.length > 0 ? { kind: "progress", paths } : { kind: "none" };
    }
    case "Stop":
      return endAction(payload);
    // Interrupt (newest builds) and StopFailure (an API error) end a turn that Stop will not.
    case "Interrupt":
    case "StopFailure":
      return { kind: "end" };
    default:
      return { kind: "none" };
  }
}
