import type { RelPath } from "../paths.js";
import { promptPreview } from "../util/format.js";
import type { SessionState, TurnState } from "./model.js";

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
    into.touchTimes.set(p, { first: into.touchTimes.get(p)?.first ?? times.first, last: times.last });
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
 * caller records `{ e: "reopen" }`. Null when the latest turn did not simply end: rewound, or a
 * rewind or redo of the session came since.
 */
export function reopenForContinuation(state: SessionState): TurnState | null {
  const latest = state.turns.at(-1);
  const endedAt = latest?.endedAt;
  if (latest?.state !== "done" || endedAt === undefined) return null;
  if (state.undos.some((undo) => undo.t >= endedAt)) return null;
  reopenTurn(state, latest.turn);
  return latest;
}

/** The fold of a `reopen` record: the latest turn, done, is open again (see `reopenForContinuation`). */
export function reopenTurn(state: SessionState, id: string): void {
  const latest = state.turns.at(-1);
  if (latest?.turn !== id || latest.state !== "done") return;
  latest.state = "open";
  latest.after = null;
  latest.endedAt = undefined;
}
