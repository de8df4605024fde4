import { MODE } from "../git/objects.js";
import type { FileState } from "../git/trees.js";
import type { RelPath } from "../paths.js";
import type { SkippedPath } from "../types.js";
import { sameState } from "../git/tree-lookup.js";
import type { RewindState, SessionState } from "./model.js";
import type { StoredExclusion } from "../store/metadata.js";

/**
 * Pure rules for rewind and redo: which turn decides each attributed path, which
 * paths were changed by someone else since, and which restore changes follow.
 */

/** For each path the rewound turns changed: the first and the last of them (indexes) that did. */
export function attributePaths(
  turns: { changed: Iterable<RelPath> }[],
): Map<RelPath, { first: number; last: number }> {
  const out = new Map<RelPath, { first: number; last: number }>();
  turns.forEach((turn, index) => {
    for (const path of turn.changed) {
      const seen = out.get(path);
      if (seen) seen.last = index;
      else out.set(path, { first: index, last: index });
    }
  });
  return out;
}

/** One attributed path with its states now, wanted, and as the session last left it. */
export interface PathStates {
  path: RelPath;
  current: FileState | null;
  target: FileState | null;
  /** State after the last rewound turn that changed it; undefined when unknown (an open turn). */
  expected: FileState | null | undefined;
  /** A rewound turn's attribution of the path is uncertain (it may be a person's or another agent's). */
  uncertain?: boolean;
  /** ... because it changed after the last tool call that could have changed it (a person's edit, perhaps). */
  afterLastTool?: boolean;
  /** State an earlier rewind of some paths (still redoable) left it in: the session's doing too. */
  leftByRewind?: FileState | null;
  /** Someone else changed it between two of the rewound turns: rewinding them undoes that too. */
  betweenTurns?: boolean;
}

/**
 * Paths someone changed after the session last did (current differs from what the session left),
 * or that the session may not have changed at all, and what someone put in the way of its writes
 * (`obstructions`), sorted. A path already as wanted is none: nothing of it would be overwritten
 * (a redo or rewind killed half-way and run again finds its own writes).
 */
export function conflictsOf(paths: PathStates[], obstructions: { path: RelPath }[] = []): RelPath[] {
  const changed = paths
    .filter(
      (p) =>
        !sameState(p.current, p.target) &&
        // A submodule is never entered nor moved by a rewind (the plan lists it as left): no conflict.
        p.current?.mode !== MODE.gitlink &&
        p.target?.mode !== MODE.gitlink &&
        (p.uncertain ||
          p.betweenTurns ||
          (p.expected !== undefined &&
            !sameState(p.current, p.expected) &&
            !(p.leftByRewind !== undefined && sameState(p.current, p.leftByRewind)))),
    )
    .map((p) => p.path);
  return [...changed, ...obstructions.map((o) => o.path)].sort();
}

/** The state rewinds left each path in (what they wrote, or absent where they deleted); later ones win. */
export function leftByRewinds(
  rewinds: { written: [RelPath, string, string][]; deleted: RelPath[] }[],
): Map<RelPath, FileState | null> {
  const left = new Map<RelPath, FileState | null>();
  for (const rewind of rewinds) {
    for (const [p, mode, oid] of rewind.written) left.set(p, { mode, oid });
    for (const p of rewind.deleted) left.set(p, null);
  }
  return left;
}

/**
 * The rewinds limited to some paths that no redo undid and whose put-back paths a turn still
 * lists (`rewoundPaths`), oldest first. Not the redo stack: a new turn empties that, and the
 * files such a rewind put back stay the session's doing.
 */
export function partialRewindsInEffect(state: SessionState): RewindState[] {
  const listed = new Set(state.turns.flatMap((t) => [...t.rewoundPaths.keys()]));
  return [...state.rewinds.values()].filter((r) => r.paths !== undefined && listed.has(r.id));
}

/** Only paths whose state must change become restore changes. */
export function changesOf(
  paths: PathStates[],
): { path: RelPath; current: FileState | null; target: FileState | null }[] {
  return paths
    .filter((p) => !sameState(p.current, p.target))
    .map(({ path, current, target }) => ({ path, current, target }));
}

/** The paths a rewind turned into what: written with their new state, deleted. For redo's check. */
export function rewindOutcome(
  written: RelPath[],
  deleted: RelPath[],
  targets: ReadonlyMap<RelPath, FileState | null>,
): { written: [RelPath, string, string][]; deleted: RelPath[] } {
  const rows: [RelPath, string, string][] = [];
  for (const path of written) {
    const state = targets.get(path);
    if (state) rows.push([path, state.mode, state.oid]);
  }
  return { written: rows, deleted: [...deleted] };
}

/** A turn's uncertain paths; of those, the ones changed after its last tool call that could have changed them. */
export interface UncertainPaths {
  uncertain: ReadonlySet<RelPath>;
  afterLastTool?: ReadonlySet<RelPath>;
}

/** True when a turn in `turns[first..last]` that changed `path` is unsure it did (for that `reason`). */
export function isUncertain(
  turns: UncertainPaths[],
  path: RelPath,
  span: { first: number; last: number },
  reason: "any" | "afterLastTool" = "any",
): boolean {
  const inSpan = turns.slice(span.first, span.last + 1);
  return inSpan.some((t) => (reason === "any" ? t.uncertain : t.afterLastTool)?.has(path) === true);
}

/**
 * Paths the rewound turns left uncaptured (a file past the size limit, a new dependency directory,
 * a `.ghostignore` match) that were not so before them, and every dependency or large directory
 * their after-snapshots left out, even one left out before them too: the turns may have changed
 * files in it that no snapshot holds. A rewind leaves them as they are, and says so, so a person
 * does not take them for undone.
 */
export function newlyExcluded(
  before: { excluded: readonly { path: RelPath }[] },
  afters: readonly ({ excluded: readonly { path: RelPath; reason: string }[] } | null)[],
): RelPath[] {
  const already = new Set(before.excluded.map((e) => e.path));
  const wholeDirs = new Set(["dependency-dir", "large-dir"]);
  const found = new Set<RelPath>();
  for (const after of afters)
    for (const { path, reason } of after?.excluded ?? [])
      if (!already.has(path) || wholeDirs.has(reason)) found.add(path);
  return [...found].sort();
}

/** A turn the session already rewound, with its snapshots (null where they are gone). */
export interface RewoundTurn<S> {
  turn: {
    changed: readonly RelPath[];
    beforeUnknown: ReadonlySet<RelPath>;
    beforeAbsent: ReadonlySet<RelPath>;
  };
  before: S | null;
  after: S | null;
}

/**
 * Where a path goes back to: before the first rewound turn that changed it, unless that turn's
 * change was the session undoing an earlier turn of the range from inside it (the agent's own
 * undo: MCP, a slash command). Then the path started that turn as the earlier turn left it, and
 * going back further keeps the earlier turn undone, as "files as before turn T" says; a change
 * someone made between them (the path not as the earlier turn left it) stops the walk.
 * `earlier`: the range's already rewound turns before `first`, latest first.
 */
export async function originOf<S>(
  path: RelPath,
  first: { snapshot: S; absent: ReadonlySet<RelPath> },
  earlier: readonly RewoundTurn<S>[],
  read: (snapshot: S, path: RelPath) => Promise<FileState | null>,
): Promise<{ snapshot: S; absent: ReadonlySet<RelPath> }> {
  let origin = first;
  for (const { turn, before, after } of earlier) {
    if (!before || !after || !turn.changed.includes(path) || turn.beforeUnknown.has(path)) continue;
    const [startedAs, leftAs] = await Promise.all([read(origin.snapshot, path), read(after, path)]);
    if (sameState(startedAs, leftAs)) origin = { snapshot: before, absent: turn.beforeAbsent };
  }
  return origin;
}

/**
 * A file its permissions kept as it was is named with the snapshot that holds what the rewind
 * wanted there (`from`), so the person who fixes the permission can put it back with `restore`:
 * running the rewind again would find the turn already rewound. `shown` is `skipped` as displayed.
 */
export function notePermissionSources(
  shown: SkippedPath[],
  skipped: readonly { path: RelPath; reason: string }[],
  origins: ReadonlyMap<RelPath, { snapshot: { id: string } }>,
): void {
  skipped.forEach((skip, i) => {
    const from = skip.reason === "permission" ? origins.get(skip.path)?.snapshot.id : undefined;
    if (from) shown[i].from = from;
  });
}

/**
 * The turns' changed lists, each with the files its after-snapshot newly left out past the size
 * limit that its before-snapshot held: such a turn changed the file (it grew it past the limit),
 * so a rewind takes it back to that before-snapshot's bytes, not to a later turn's start that
 * never held it. `read` gives a file's state in a snapshot.
 */
export async function withFilesLeftOut<S extends { meta: { excluded: readonly StoredExclusion[] } }>(
  changed: readonly (readonly RelPath[])[],
  befores: readonly S[],
  afters: readonly (S | null)[],
  read: (snapshot: S, path: RelPath) => Promise<FileState | null>,
): Promise<RelPath[][]> {
  return Promise.all(
    changed.map(async (list, i) => {
      const after = afters[i];
      if (!after) return [...list];
      const already = new Set(befores[i].meta.excluded.map((e) => e.path));
      const grown = after.meta.excluded
        .filter((e) => e.reason === "large-file" && !already.has(e.path) && !list.includes(e.path))
        .map((e) => e.path);
      const held = await Promise.all(grown.map((p) => read(befores[i], p)));
      return [...list, ...grown.filter((_, k) => held[k] !== null)].sort();
    }),
  );
}
