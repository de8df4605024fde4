import type { RelPath } from "../paths.js";
import type { RewindState, SessionState, TurnState } from "./model.js";

/**
 * An agent's undo from inside its turn (a rewind of earlier turns while it stays open) is that
 * turn's work: rewinding the turn puts back what the undo took away. So the turns the undo
 * rewound, where they came before the turn the new rewind goes back to, count as `done` again;
 * its redo makes them `rewound` once more. A redo from inside the turn is the mirror: rewinding
 * the turn takes away again what the redo brought back, so the turns it redid are `rewound`
 * again. `rewind`: the new rewind (or the one redo undoes). Turns the new rewind itself goes back
 * past stay as the undo left them: their work stays undone.
 */
export function settleInnerUndos(
  state: SessionState,
  rewind: Pick<RewindState, "id" | "to" | "turns" | "paths" | "t">,
  redone: boolean,
  turnOf: (id: string) => TurnState | undefined,
): void {
  if (rewind.paths !== undefined) return; // limited to some paths: its turns' undos stay as they are
  const target = turnOf(rewind.to);
  if (!target) return;
  const before = (turn: TurnState) => state.turns.indexOf(turn) < state.turns.indexOf(target);
  // The undos inside a turn: its rewinds (undid: their turns' work taken away) and its redos
  // (their turns' work brought back). Rewinding the turn reverses them; redoing it, that reversal.
  // A redone rewind is no longer among the rewinds: its redo holds it.
  const undos = [
    ...[...state.rewinds.values()].map((r) => ({ t: r.t, rewind: r, undid: true })),
    ...state.redos.flatMap((r) => [
      { t: r.rewind.t, rewind: r.rewind, undid: true },
      { ...r, undid: false },
    ]),
  ]
    .filter((inner) => inner.rewind.id !== rewind.id) // not the one being rewound or redone
    .sort((a, b) => a.t - b.t);
  // Rewinding the turn reverses its undos, the last first, so the first one's is what is left;
  // redoing it makes them again in their order.
  if (!redone) undos.reverse();
  for (const id of rewind.turns) {
    const turn = turnOf(id);
    if (!turn) continue;
    const end = turn.endedAt ?? rewind.t;
    for (const inner of undos) {
      if (inner.t < turn.startedAt || inner.t > end) continue;
      // Whether the turns that undo acted on are to read as rewound now.
      const takenAway = redone === inner.undid;
      for (const otherId of inner.rewind.turns) {
        const other = turnOf(otherId);
        if (!other || !before(other)) continue;
        if (inner.rewind.paths !== undefined) {
          if (takenAway) other.rewoundPaths.set(inner.rewind.id, changesPutBack(other, inner.rewind));
          else other.rewoundPaths.delete(inner.rewind.id);
        } else if (takenAway && other.state === "done") other.state = "rewound";
        else if (!takenAway && other.state === "rewound") other.state = "done";
      }
    }
  }
}

/** Of `turn`'s changes, those a rewind limited to some paths put back (one it skipped was not). */
export function changesPutBack(
  turn: TurnState,
  rewind: { written: [string, string, string][]; deleted: string[] },
): string[] {
  const putBack = new Set([...rewind.written.map(([p]) => p), ...rewind.deleted]);
  return turn.changed.filter((p) => putBack.has(p));
}

/**
 * Empties the redo stack for the turn `turn` begins, but for a rewind killed half-way. What it
 * held is kept in `heldRedo` for a redo from inside that turn (see `redoSession`), together with
 * what the previous turn kept if that turn changed nothing (`/ghostcommit-log`, then a redo).
 */
export function holdRedos(state: SessionState, turn: string): void {
  const last = state.turns.at(-1);
  const quiet = last !== undefined && last.turn === state.heldRedo?.turn && last.changed.length === 0;
  const kept = quiet && last.state === "done" ? (state.heldRedo?.stack ?? []) : [];
  state.heldRedo = { turn, stack: [...kept, ...state.redoStack.filter((r) => !r.pending)] };
  state.redoStack = state.redoStack.filter((r) => r.pending);
}

/** A redo of a rewind a turn's beginning held back (see `holdRedos`) finds it on the stack again. */
export function releaseHeldRedos(state: SessionState, rewindId: string): void {
  const held = state.heldRedo?.stack ?? [];
  if (held.some((r) => r.id === rewindId)) state.redoStack.unshift(...held);
  state.heldRedo = undefined;
}

/** The paths a rewind wrote or deleted. */
export function pathsChangedBy(rewind: {
  written: [RelPath, string, string][];
  deleted: RelPath[];
}): RelPath[] {
  return [...rewind.written.map(([p]) => p), ...rewind.deleted];
}
