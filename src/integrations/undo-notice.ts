import { realpathSync } from "node:fs";
import { quotedPath, turnsNamed } from "../util/format.js";
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

/**
 * Plain sentences (no angle brackets: some agents escape them), the events in the order they
 * happened. Within the cap, the newest events are kept first, whole if they fit: the last one says
 * what the files are now. The first that does not fit is cut to the file lines that do, the older
 * ones to one line, and the closing instruction always stays.
 */
export function noticeText(events: UndoEvent[], pathsFrom: string | null = null): string {
  // Said of the person's undos and of the model's own (the MCP tools, inside its last turn) alike.
  const head = [
    "ghostcommit: since the last prompt, rewinds and redos (the person's, or yours through ghostcommit's tools) changed files of this workspace.",
  ];
  if (pathsFrom !== null) head.push(`Paths are relative to ${pathsFrom}.`);
  const tail = "Re-read any of these files before editing them: what you remember of them is out of date.";
  let budget = MAX_CHARS - [...head, tail].join("\n").length - 1;
  const kept: string[][] = [];
  let older = events.length;
  while (older > 0) {
    const event = events[older - 1];
    const reserve = older > 1 ? OMISSION_CHARS : 0; // for the line naming the older ones
    const block = eventLines(event, MAX_FILES_PER_EVENT);
    const size = block.join("\n").length + 1;
    if (size <= budget - reserve) {
      kept.unshift(block);
      budget -= size;
      older--;
      continue;
    }
    const room = budget - reserve - block[0].length - 1 - MORE_CHARS;
    if (room > 0) {
      const [heading, ...files] = eventLines(event, Number.MAX_SAFE_INTEGER);
      let fitting = 0;
      for (let used = 0; fitting < files.length && used + files[fitting].length + 1 <= room; fitting++)
        used += files[fitting].length + 1;
      kept.unshift([heading, ...files.slice(0, fitting), `- … and ${files.length - fitting} more`]);
      older--;
    }
    break;
  }
  const left = events.slice(0, older);
  const which = turnsNamed([...new Set(left.flatMap((e) => e.turns))]);
  const omitted = left.length
    ? [
        `(${left.length} earlier rewind or redo event${left.length === 1 ? "" : "s"}${which.length < 120 ? `, of ${which},` : ""} left out here: what follows came after.)`,
      ]
    : [];
  return [...head, ...omitted, ...kept.flat(), tail].join("\n");
}

/** Room kept for the line naming the events left out, and for a "… and N more" line. */
const OMISSION_CHARS = 200;
const MORE_CHARS = 30;

/** An event's heading and its file lines, at most `most` of them, then how many more. */
function eventLines(e: UndoEvent, most: number): string[] {
  const turns = turnsNamed(e.turns);
  // Everything it would have put back was left as it is (excluded since, never captured).
  if (e.files.length === 0)
    return [
      e.kind === "rewind"
        ? `Rewound ${turns}, though no file changed: what it changed was left as it is.`
        : `Redo restored ${turns}, though no file changed.`,
    ];
  const them = e.turns.length === 1 ? "it" : "them";
  const heading = e.unfinished
    ? `A rewind of ${turns} was cut off before it finished: some of these files are back as they were before ${them}, the others are still as ${e.turns.length === 1 ? "it" : "they"} left them, until the person finishes the rewind or undoes it:`
    : e.kind === "rewind"
      ? `Rewound ${turns}: these files are back as they were before ${them}:`
      : `Redo restored ${turns}: these files are back as they were before the rewind:`;
  const deleted = new Set(e.deleted);
  const gone = e.unfinished ? " (to be deleted)" : " (deleted)";
  // A name with a newline or a control character, quoted as git quotes it: one list item each.
  const shown = e.files.slice(0, most).map((f) => `- ${quotedPath(f)}${deleted.has(f) ? gone : ""}`);
  if (e.files.length > shown.length) shown.push(`- … and ${e.files.length - shown.length} more`);
  return [heading, ...shown];
}
