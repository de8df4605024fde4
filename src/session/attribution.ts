import type { RelPath } from "../paths.js";
import type { SessionState, TurnState } from "./model.js";

/**
 * Which paths a turn changed: those that differ between its before and after
 * snapshots plus those it touched. A path that an overlapping turn of another session touched,
 * and this turn did not, is that session's alone. Pure.
 *
 * An edit no hook reported (a shell command, a person) during overlapping turns of two sessions
 * is attributed to every such turn whose before/after diff sees it, and marked uncertain there.
 */
export function attributeTurn(
  diffPaths: Iterable<RelPath>,
  ownTouched: ReadonlySet<RelPath>,
  othersTouched: ReadonlySet<RelPath>,
): RelPath[] {
  const changed = new Set<RelPath>(ownTouched);
  for (const path of diffPaths) {
    if (othersTouched.has(path) && !ownTouched.has(path)) continue;
    changed.add(path);
  }
  return [...changed].sort();
}

/**
 * Files touched by other sessions' turns that overlap [startedAt, endedAt] (microseconds): begun
 * before it ended, and still open or ended after it began. So are the files another session's
 * rewind or redo wrote or deleted within it: ghostcommit's own undo is no turn's work.
 */
export function overlappingTouches(others: SessionState[], startedAt: number, endedAt: number): Set<RelPath> {
  const out = new Set<RelPath>();
  for (const session of others) {
    for (const turn of turnsOf(session)) {
      if (turn.startedAt > endedAt) continue;
      const until = ranUntil(turn);
      if (until !== undefined && until < startedAt) continue;
      for (const path of turn.touched) out.add(path);
    }
    for (const undo of session.undos) {
      if (undo.t >= startedAt && undo.t <= endedAt) for (const path of undo.paths) out.add(path);
    }
  }
  return out;
}

/**
 * When a turn of another session first ran beside [startedAt, endedAt] (microseconds): its start,
 * or `startedAt` if one was running already; null if none overlaps.
 */
export function overlapStart(others: SessionState[], startedAt: number, endedAt: number): number | null {
  let first: number | null = null;
  for (const session of others) {
    for (const turn of turnsOf(session)) {
      const until = ranUntil(turn);
      if (turn.startedAt > endedAt || (until !== undefined && until < startedAt)) continue;
      const from = Math.max(turn.startedAt, startedAt);
      if (first === null || from < first) first = from;
    }
  }
  return first;
}

/** Other sessions' turns that ran beside [startedAt, endedAt] (microseconds), as `overlappingTouches` counts them. */
export function overlappingTurns(others: SessionState[], startedAt: number, endedAt: number): TurnState[] {
  return others.flatMap((session) =>
    turnsOf(session).filter(
      (turn) => turn.startedAt <= endedAt && (ranUntil(turn) ?? Number.POSITIVE_INFINITY) >= startedAt,
    ),
  );
}

/**
 * Of the files `turn` touched, those a turn of another session beside it (`beside`) touched after
 * this turn's first report of them, or before with no tool call of its own finished by then (no
 * progress mark, no end): that agent's edit may be in this turn's bytes, so rewinding this turn
 * could revert it. One touched before and settled is in this turn's before-state (see touch.ts).
 */
export function touchedBesideSince(turn: TurnState, beside: TurnState[]): Set<RelPath> {
  const out = new Set<RelPath>();
  for (const other of beside) {
    for (const [path, { last }] of other.touchTimes) {
      const mine = turn.touchTimes.get(path);
      if (!mine) continue;
      const settled = other.marks.find((m) => m.t > last)?.t ?? ranUntil(other) ?? Number.POSITIVE_INFINITY;
      if (settled > mine.first) out.add(path);
    }
  }
  return out;
}

/** A session's turns, and the prompt it is working on whose turn never began (see `promptArrived`). */
function turnsOf(session: SessionState): TurnState[] {
  return session.unbegun ? [...session.turns, session.unbegun] : session.turns;
}

/**
 * When a turn stopped running: its end, or when its conversation ended with it still open (an
 * interrupt, then /clear or exit); undefined while it may still run.
 */
function ranUntil(turn: TurnState): number | undefined {
  return turn.endedAt ?? turn.abandonedAt;
}
