import type { FileState } from "../git/trees.js";
import { sameState } from "../git/tree-lookup.js";
import type { RelPath } from "../paths.js";
import type { SessionState } from "./model.js";
import { leftByRewinds } from "./rewind-plan.js";

/*
 * Whether a path a rewind would put back was changed by someone else between two of the turns it
 * rewinds, and what counts as the session's own doing there (its earlier rewinds, its undone turns).
 */

/** The snapshots of the turns a rewind rewinds, by position; `rewoundBetween`, `rewindsBetween`: see changedBetweenTurns. */
export interface TurnSnapshots<S> {
  befores: S[];
  afters: (S | null)[];
  rewoundBetween?: (gap: number) => S[];
  rewindsBetween?: (gap: number) => ReadonlyMap<RelPath, FileState | null>[];
}

/**
 * What each of the session's own rewinds (those redo undid too) left paths in, of
 * those run between the end of the turn at position `gap` of `turns` and the beginning of the next.
 */
export function rewindsBetweenOf(
  turns: { startedAt: number; endedAt?: number; abandonedAt?: number }[],
  state: SessionState,
): (gap: number) => Map<RelPath, FileState | null>[] {
  const rewinds = [...state.rewinds.values(), ...state.redos.map((r) => r.rewind)];
  const byGap = new Map<number, Map<RelPath, FileState | null>[]>(); // asked once per path
  return (gap) => {
    const known = byGap.get(gap);
    if (known) return known;
    const ended = turns[gap].endedAt ?? turns[gap].abandonedAt ?? turns[gap].startedAt;
    const began = turns[gap + 1].startedAt;
    const left = rewinds.filter((r) => r.t > ended && r.t < began).map((r) => leftByRewinds([r]));
    byGap.set(gap, left);
    return left;
  };
}

/**
 * The after-snapshots of the turns already rewound (`rewound`, with their positions in the
 * session) that lie between the turns a rewind rewinds (`turns`), gap by gap.
 */
export function rewoundBetweenOf<T, S>(
  session: T[],
  turns: T[],
  rewound: { index: number; after: S | null }[],
): (gap: number) => S[] {
  return (gap) => {
    const [from, until] = [session.indexOf(turns[gap]), session.indexOf(turns[gap + 1])];
    return rewound.flatMap((r) => (r.index > from && r.index < until && r.after ? [r.after] : []));
  };
}

/**
 * Whether `p`, changed by rewound turns `first` to `last`, was changed by someone else between two
 * of them: a turn began with it other than the turn before left it (a person's save between
 * turns, which a later turn then edited). Only paths both snapshots hold are judged (one lacking
 * it may not have captured it); a state an earlier rewind of some paths left is the session's.
 * So is one a turn of the session already rewound between the two left (`rewoundBetween(j)`: the
 * after-snapshots of those between turn j and the next): a turn undone from inside a later one
 * ran before that later turn began. So is one a rewind of the session run between the two left
 * (`rewindsBetween(j)`), redone since from inside the later turn (that turn's work, then).
 */
export async function changedBetweenTurns<S>(
  file: (snapshot: S, p: RelPath) => Promise<FileState | null>,
  p: RelPath,
  span: { first: number; last: number },
  { befores, afters, rewoundBetween = () => [], rewindsBetween = () => [] }: TurnSnapshots<S>,
  leftByRewind?: FileState | null,
): Promise<boolean> {
  for (let j = span.first; j < span.last; j++) {
    const left = afters[j];
    if (!left) continue;
    const [ended, began] = [await file(left, p), await file(befores[j + 1], p)];
    if (ended === null || began === null || sameState(ended, began)) continue;
    if (leftByRewind !== undefined && sameState(began, leftByRewind)) continue;
    const leftByUndone = await Promise.all(rewoundBetween(j).map((after) => file(after, p)));
    if (leftByUndone.some((state) => state !== null && sameState(state, began))) continue;
    if (rewindsBetween(j).some((left) => sameState(left.get(p) ?? null, began))) continue;
    return true;
  }
  return false;
}
