import { lstatSync } from "node:fs";
import { fsPath, type RelPath } from "../paths.js";
import type { TurnState } from "./model.js";
import type { CatFile } from "../git/cat-file.js";
import { sameState, TreeLookup } from "../git/tree-lookup.js";

type Mark = ProgressMark;

/**
 * A progress mark: its tree, when it was taken (microseconds), the only paths it read, whether no
 * tool call had written them (just before an edit, or after one that failed), and then when each
 * was last written (milliseconds; -1 for none). `hooksBeside`: the agent ran other hooks beside
 * this one after the call (a formatter may rewrite what the mark read).
 */
export type ProgressMark = {
  tree: string;
  t: number;
  paths?: RelPath[];
  unwritten?: true;
  mtimes?: number[];
  hooksBeside?: true;
};

/** A mark's modification times, if well formed. */
export const timesOf = (times: unknown, paths?: RelPath[]) =>
  Array.isArray(times) && times.length === paths?.length && times.every((t) => typeof t === "number")
    ? (times as number[])
    : undefined;

/** A `mark` record's mark, its optional fields only where well formed and set. */
export function markOf(record: ProgressMark & { mtimes?: unknown }): ProgressMark {
  const { tree, t, paths, unwritten, mtimes, hooksBeside } = record;
  return {
    tree,
    t,
    paths,
    unwritten: unwritten || undefined,
    mtimes: timesOf(mtimes, paths),
    hooksBeside: hooksBeside === true || undefined,
  };
}

/** How long after an edit tool's mark another hook of the same event may still rewrite its file. */
export const HOOK_REWRITE_WINDOW_MS = 10_000;

/**
 * Whether a path was named by a call no mark of a writing call followed: the last call, cut off
 * (by an interrupt, or the stop came first), whose bytes it may hold.
 */
export function namedByCutOffCall(turn: TurnState): (p: RelPath) => boolean {
  const lastWriting = Math.max(...turn.marks.filter((m) => !m.unwritten).map((m) => m.t));
  return (p) => (turn.touchTimes.get(p)?.last ?? Number.NEGATIVE_INFINITY) > lastWriting;
}

/** The turn's last mark that read `p` after a tool call that may have written it. */
export function lastWriterOf(turn: TurnState, p: RelPath): Mark | undefined {
  return [...turn.marks].reverse().find((m) => !m.unwritten && (m.paths?.includes(p) ?? true));
}

/**
 * Whether `p`, changed since the edit tool's mark that last read it, was last written while that
 * tool call's hooks ran: the agent runs every hook of an event at once, and one that formats the
 * edited file (a documented use of Claude Code's PostToolUse and Cursor's afterFileEdit) may write
 * after ghostcommit's mark read it. Its modification time then falls between the call's start and
 * the session's next event, within `HOOK_REWRITE_WINDOW_MS` of the mark: too soon after the agent's
 * own edit to be a person's, who edits while the agent thinks or answers, seconds later.
 */
export function rewrittenByToolHooks(root: string, turn: TurnState, p: RelPath, now: number): boolean {
  let modified: number;
  try {
    modified = lstatSync(fsPath(root, p)).mtimeMs * 1000;
  } catch {
    return false; // gone: no formatter deletes the file it formats
  }
  return inHookWindow(turn, lastWriterOf(turn, p), p, modified, now);
}

/** Whether `modified` (microseconds) falls while the hooks of `writer`'s edit of `p` ran. */
function inHookWindow(turn: TurnState, writer: Mark | undefined, p: RelPath, modified: number, now: number) {
  if (!writer?.paths?.includes(p)) return false; // a shell call's mark: no edit, no formatter
  if (!writer.hooksBeside) return false; // no other hook ran after the edit: none rewrote it
  // The call began after the session's event before its mark (its own PreToolUse, where the agent
  // sends one): a rewrite by a hook beside it may come before the mark is stamped, or look so, for
  // a file's time is the kernel's coarse clock, milliseconds behind. (A file's last touch may be a
  // later call's: not this one's start.)
  const events = [
    ...turn.marks.map((m) => m.t),
    ...[...turn.touchTimes.values()].flatMap((t) => [t.first, t.last]),
  ];
  const started = Math.max(turn.startedAt, ...events.filter((t) => t < writer.t));
  const later = [...turn.marks.map((m) => m.t), ...[...turn.touchTimes.values()].map((t) => t.last)];
  const next = Math.min(now, ...later.filter((t) => t > writer.t));
  return modified >= started && modified <= Math.min(next, writer.t + HOOK_REWRITE_WINDOW_MS * 1000);
}

/**
 * Of `paths`, those a mark of no writing call saw changed by no tool call: what it read differs
 * from the last mark before it that read the path after a call that may have written it (the
 * before-state without one), unless the file was rewritten while that call's hooks ran. Such
 * marks are taken just before an edit tool runs, and after one that failed (Claude Code refuses
 * an edit of a file changed since the agent read it): what they see changed is most likely the
 * person's edit, and stays in doubt whatever follows (the agent edits the person's version, a
 * later shell call reads it too).
 */
export async function seenChangedByNoTool(
  cat: CatFile,
  turn: TurnState,
  beforeTree: string,
  paths: RelPath[],
): Promise<RelPath[]> {
  const wanted = new Set(paths);
  const seen = new Set<RelPath>();
  if (!turn.marks.some((m) => m.unwritten)) return [];
  const lookup = new TreeLookup(cat);
  try {
    for (const [i, mark] of turn.marks.entries()) {
      if (!mark.unwritten) continue;
      for (const p of mark.paths ?? []) {
        if (!wanted.has(p) || seen.has(p)) continue;
        const reads = (m: Mark) => !m.unwritten && (m.paths?.includes(p) ?? true);
        const writer = turn.marks.slice(0, i).reverse().find(reads);
        const before = await lookup.file(writer?.tree ?? beforeTree, p);
        // Absent there may be only uncaptured (an ignored file no one had touched): not known.
        if (before === null || sameState(before, await lookup.file(mark.tree, p))) continue;
        // Rewritten while the hooks of the agent's own edit ran (a formatter): not a person's.
        const modified = mark.mtimes?.[mark.paths?.indexOf(p) ?? -1];
        if (modified === undefined || !inHookWindow(turn, writer, p, modified * 1000, mark.t)) seen.add(p);
      }
    }
  } catch {
    return []; // a mark's objects are gone: nothing more is known
  }
  return [...seen];
}
