import type { RelPath } from "../paths.js";
import { promptPreview } from "../util/format.js";
import type { JournalRecord, SessionState, TurnState } from "./model.js";
import type { StoreContext } from "../store/context.js";
import { commitTree } from "../git/trees.js";
import { nowMicros } from "../store/metadata.js";

/**
 * The done turn an open turn continues, or null. After another hook blocks its answer, Gemini CLI
 * (0.35 on, client.ts) goes on with the hook's reason as a new request and fires BeforeAgent for
 * it, so a turn named after that reason begins; its AfterAgent (`stop_hook_active`) names the
 * user's prompt. A later stop naming the previous turn's prompt, while the open turn (the latest)
 * has another, says the open turn is that turn's retry.
 */
export function continuedTurn(state: SessionState, open: TurnState, prompt?: string): TurnState | null {
  if (prompt === undefined) return null;
  const index = state.turns.indexOf(open);
  const previous = state.turns[index - 1];
  const preview = promptPreview(prompt);
  if (index !== state.turns.length - 1 || previous?.state !== "done") return null;
  return previous.prompt === preview && open.prompt !== preview ? previous : null;
}

/**
 * Makes the open turn `folds.turn`, the latest, part of `into`, the done turn just before it:
 * its touches and progress marks become `into`'s, and it is no turn of its own. `unknown`: paths
 * whose state when `into` began was never captured. Does nothing when that turn is not there
 * (already folded).
 */
export function foldContinuation(
  state: SessionState,
  into: TurnState,
  folds: { turn: string; unknown?: RelPath[] },
): void {
  const index = state.turns.length - 1;
  const open = state.turns[index];
  if (open?.turn !== folds.turn || open.state !== "open" || state.turns[index - 1] !== into) return;
  state.turns.pop();
  for (const p of open.touched) into.touched.add(p);
  for (const [p, times] of open.touchTimes) {
    const { first = times.first, afterEdit = times.afterEdit } = into.touchTimes.get(p) ?? {};
    into.touchTimes.set(p, { first, last: times.last, afterEdit });
  }
  for (const p of folds.unknown ?? []) into.beforeUnknown.add(p);
  into.marks.push(...open.marks);
  if (open.progress !== undefined) into.progress = open.progress;
  for (const [id, paths] of open.rewoundPaths) into.rewoundPaths.set(id, paths);
}

/**
 * For an agent's tool call that comes after its latest turn ended, with no prompt since: the
 * latest turn, open again in `state`. Another hook blocked that turn's stop, and Claude Code,
 * Codex and Gemini CLI (before 0.35) then go on working without a new prompt: what the agent does
 * now is that turn's work, and a path it reports needs its before-state captured as in any open
 * turn (an ignored `.env` it edits would otherwise be deleted by a rewind that never saw it). The
 * state at its stop becomes a progress mark: all of it was the agent's. Returns the record the
 * caller writes, or null when the latest turn did not simply end (rewound, or a rewind or redo of
 * the session came since).
 */
export async function reopenForContinuation(
  engine: StoreContext,
  state: SessionState,
): Promise<Extract<JournalRecord, { e: "reopen" }> | null> {
  const latest = state.turns.at(-1);
  const endedAt = latest?.endedAt;
  if (latest?.state !== "done" || endedAt === undefined || latest.after === null) return null;
  if (state.undos.some((undo) => undo.t >= endedAt) || promptSince(state, endedAt)) return null;
  const after = latest.after;
  const tree = await engine.withReader((cat) => commitTree(cat, after)).catch(() => undefined);
  const record = { e: "reopen" as const, turn: latest.turn, ...(tree ? { tree } : {}), t: nowMicros() };
  reopenTurn(state, record);
  return record;
}

/** The fold of a `reopen` record: the latest turn, done, is open again (see `reopenForContinuation`). */
export function reopenTurn(state: SessionState, record: { turn: string; tree?: string }): void {
  const latest = state.turns.at(-1);
  if (latest?.turn !== record.turn || latest.state !== "done") return;
  if (record.tree && latest.endedAt !== undefined) {
    latest.progress = record.tree;
    latest.marks.push({ tree: record.tree, t: latest.endedAt });
  }
  latest.state = "open";
  latest.after = null;
  latest.endedAt = undefined;
}

/**
 * The fold of a `prompt` record, which a turn's beginning writes before its snapshot. Alone (its
 * hook was killed by the agent's timeout, or failed), it says the agent moved on to a new prompt
 * whose turn never began: the tool calls that follow are that prompt's work, not the previous
 * turn's. A turn still open then ran no longer (its stop never came), and what changed after its
 * last progress mark is that prompt's work: it ends at that mark (see `snapshotAtLastMark`).
 */
export function promptArrived(state: SessionState, record: { turn: string; t: number }): void {
  // Until its turn begins (or it ends: its stop, the conversation's end), another session's turn
  // beside it must count its edits as this agent's, as it counts an open turn's.
  state.unbegun = newTurn(record.turn, "", "", record.t);
  state.unbegunPrompts = (state.unbegunPrompts ?? 0) + 1;
  const open = state.turns.find((t) => t.state === "open" && t.turn !== record.turn);
  ranNoLonger(open, record.t);
  if (open) open.supersededAt ??= record.t;
}

/** Whether a prompt came after `t` (microseconds) whose turn never began. */
export function promptSince(state: SessionState, t: number): boolean {
  return state.unbegun !== undefined && state.unbegun.startedAt > t;
}

/** An open turn whose agent moved on (conversation ended, or a new prompt came): its tool calls are over. */
export function ranNoLonger(turn: TurnState | undefined, t: number): void {
  if (turn?.state === "open") turn.abandonedAt ??= t;
}

/** The open turn, unless its agent moved on from it (see `ranNoLonger`): where a tool call's work goes. */
export function workingTurnOf(state: SessionState): TurnState | undefined {
  return state.turns.find((t) => t.state === "open" && t.abandonedAt === undefined);
}

/** A turn as its beginning makes it: open, nothing touched or marked yet. */
export function newTurn(turn: string, prompt: string, before: string, startedAt: number): TurnState {
  return {
    turn,
    prompt,
    before,
    after: null,
    changed: [],
    touched: new Set(),
    touchTimes: new Map(),
    beforeAbsent: new Set(),
    beforeUnknown: new Set(),
    marks: [],
    uncertain: new Set(),
    state: "open",
    rewoundPaths: new Map(),
    startedAt,
  };
}
