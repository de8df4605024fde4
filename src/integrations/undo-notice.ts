import { realpathSync } from "node:fs";
import { turnsNamed } from "../util/format.js";
import path from "node:path";
import type { Workspace } from "../workspace.js";
import type { UndoEvent } from "../types.js";
import type { HookEvent } from "./event.js";

/** Agents whose prompt event takes context for the model, and the event name their answer carries. */
const CONTEXT_EVENT: Partial<Record<HookEvent["agent"], string>> = {
  "claude-code": "UserPromptSubmit",
  codex: "UserPromptSubmit",
  gemini: "BeforeAgent",
};

/** Agents cap injected context (Claude Code at about 10,000 characters): stay well below. */
const MAX_CHARS = 8000;
const MAX_FILES_PER_EVENT = 100;

/** True for a prompt event whose agent documents a context field: its answer may tell the model. */
export function canTellModel(event: HookEvent): boolean {
  return event.action.kind === "begin" && !event.subagent && CONTEXT_EVENT[event.agent] === event.name;
}

/**
 * The answer to a prompt event that follows a rewind or redo of its session: the agent's context
 * field naming the turns and files that went back, so the model re-reads them instead of editing
 * from memory. Null when nothing was undone since the session's last prompt.
 */
export async function undoNotice(ws: Workspace, event: HookEvent): Promise<string | null> {
  const hookEventName = CONTEXT_EVENT[event.agent];
  if (!hookEventName || !event.session) return null;
  const events = await ws.undoneSinceLastTurn(event.session);
  if (events.length === 0) return null;
  // The agent's shell may be in a subdirectory (it `cd`-ed there); the paths are the workspace's.
  const elsewhere = event.cwd !== undefined && realOrAsIs(event.cwd) !== ws.root;
  const additionalContext = noticeText(events, elsewhere ? ws.root : null);
  return JSON.stringify({ hookSpecificOutput: { hookEventName, additionalContext } });
}

function realOrAsIs(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** Plain sentences (no angle brackets: some agents escape them). */
export function noticeText(events: UndoEvent[], pathsFrom: string | null = null): string {
  const lines = ["ghostcommit: files of this workspace changed outside your edits since the last prompt."];
  if (pathsFrom !== null) lines.push(`Paths are relative to ${pathsFrom}.`);
  for (const e of events) {
    const turns = turnsNamed(e.turns);
    lines.push(
      e.kind === "rewind"
        ? `Rewound ${turns}: these files are back as they were before ${e.turns.length === 1 ? "it" : "them"}:`
        : `Redo restored ${turns}: these files are back as they were before the rewind:`,
    );
    const deleted = new Set(e.deleted);
    const shown = e.files
      .slice(0, MAX_FILES_PER_EVENT)
      .map((f) => `- ${f}${deleted.has(f) ? " (deleted)" : ""}`);
    if (e.files.length > shown.length) shown.push(`- … and ${e.files.length - shown.length} more`);
    lines.push(...shown);
  }
  lines.push("Re-read any of these files before editing them: what you remember of them is out of date.");
  const text = lines.join("\n");
  return text.length <= MAX_CHARS ? text : `${text.slice(0, MAX_CHARS - 1)}…`;
}
