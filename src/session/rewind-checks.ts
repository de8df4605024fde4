import { worktreeStates } from "../capture/worktree-state.js";
import { sameState, type TreeLookup } from "../git/tree-lookup.js";
import type { FileState } from "../git/trees.js";
import { MODE } from "../git/objects.js";
import { displayPath, type RelPath } from "../paths.js";
import { isNamed } from "../restore/path-filter.js";
import { insideSparseCheckout } from "../restore/sparse-absent.js";
import { leftOutBy } from "../store/metadata.js";
import type { StoredSnapshot } from "../store/store.js";
import { GhostcommitError } from "../errors.js";
import type { PlanStep } from "../restore/plan.js";
import type { ExpectedRewind } from "../types.js";
import { conflictError, type SessionContext } from "./context.js";
import { changedSinceShown, type OverriddenState } from "./overridden-state.js";
import { quotedPath, turnsNamed, humanText } from "../util/format.js";
import type { SessionState, TurnState } from "./model.js";
import { attributePaths, isUncertain, type PathStates } from "./rewind-plan.js";
import { changedBetweenTurns, type TurnSnapshots } from "./between-turns.js";
import { unseenBy } from "./touch.js";
import type { CatFile } from "../git/cat-file.js";
import { inDependencyDirsSince } from "./rewind-skips.js";
import { headMovedSince, withHeadMoved } from "../restore/head-moved.js";

/** The checks of a rewind that need the work tree or the journals: before it, and of an open turn. */

/**
 * Refuses before the safety snapshot when the work tree already shows a conflict, so a refused
 * rewind leaves the store as it was. Paths it cannot judge cheaply are left to the final check.
 */
export async function precheck(
  ctx: SessionContext,
  lookup: TreeLookup,
  turns: TurnState[],
  sequence: TurnSnapshots<StoredSnapshot>,
  named: RelPath[] | undefined,
  partial: ReadonlyMap<RelPath, FileState | null>,
  { touched, keptOpen }: { touched: ReadonlySet<RelPath>; keptOpen?: string },
): Promise<void> {
  const { befores, afters } = sequence;
  const attributed = new Map([...attributePaths(turns)].filter(([p]) => isNamed(p, named)));
  // In a dependency directory named since: the final check leaves it as excluded.
  const since = await inDependencyDirsSince(ctx.engine, attributed.keys(), touched);
  const now = await worktreeStates(ctx.engine, [...attributed.keys()]);
  const conflicts: RelPath[] = [];
  const uncertain: RelPath[] = [];
  const afterLastTool: RelPath[] = [];
  const betweenTurns: RelPath[] = [];
  for (const [p, span] of attributed) {
    if (turns[span.first].beforeUnknown.has(p) || since.has(p)) continue;
    const current = now.get(p);
    // Already as the rewind would leave it (a person put it back): the rewind has nothing to do there.
    if (current !== undefined && sameState(current, await lookup.file(befores[span.first].tree, p))) continue;
    const after = afters[span.last];
    const ended = after ? await lookup.file(after.tree, p) : undefined;
    // A submodule: never entered by a rewind, so never its conflict (the plan lists it as left).
    if (ended?.mode === MODE.gitlink || current?.mode === MODE.gitlink) continue;
    if (isUncertain(turns, p, span)) {
      conflicts.push(p);
      uncertain.push(p);
      if (isUncertain(turns, p, span, "afterLastTool")) afterLastTool.push(p);
      continue;
    }
    if (!after || current === undefined || ended === undefined) continue;
    // On disk, not captured at the turn's end: ignored or excluded now, maybe (a .gitignore the
    // turn wrote), which only the final check's capture tells.
    if (ended === null && current !== null) continue;
    // Not captured at the turn's end (a .ghostignore match, over the size limit): the final
    // check leaves it as excluded, when it is not captured now either.
    if (leftOutBy(after.meta, p)) continue;
    const read = (snapshot: { tree: string }, path: RelPath) => lookup.file(snapshot.tree, path);
    if (await changedBetweenTurns(read, p, span, sequence, partial.get(p))) {
      conflicts.push(p);
      betweenTurns.push(p);
      continue;
    }
    if (partial.has(p) && sameState(current, partial.get(p)!)) continue;
    if (!sameState(current, ended)) conflicts.push(p);
  }
  const inside = await insideSparseCheckout(ctx.engine, conflicts);
  if (inside.length > 0) {
    const session = ctx.journal.session;
    const said = (paths: RelPath[]) => paths.filter((p) => inside.includes(p)).map(displayPath);
    const why = {
      uncertain: said(uncertain),
      afterLastTool: said(afterLastTool),
      keptOpen,
      betweenTurns: said(betweenTurns),
    };
    // Where HEAD moved since (a checkout), that may be what changed them: said with the refusal.
    const head = await headMovedSince(ctx.engine.location, befores[0].meta.parent);
    throw withHeadMoved(conflictError("rewind", session, inside.sort().map(displayPath), why), head);
  }
}

/**
 * Refuses (`plan-changed`) a rewind that would do other than what the caller previewed: other
 * turns, or (once `steps` are known, just before the first file changes) other files written or
 * deleted, or other conflicts overwritten (`overridden`, a forced rewind's). The message says
 * what it would now do.
 */
export function refuseUnexpected(
  expected: ExpectedRewind | undefined,
  where: { session: string; to: string },
  turns: string[],
  steps?: PlanStep[],
  overridden: string[] = [],
  overriddenNow?: Map<string, string>,
): void {
  if (!expected) return;
  const changes: string[] = [];
  if (!sameList(expected.rewoundTurns, turns))
    changes.push(`rewind ${turnsNamed(turns)}, not ${turnsNamed(expected.rewoundTurns)}`);
  if (steps) changes.push(...otherFiles(expected, steps, overridden, "the turns", overriddenNow));
  if (changes.length === 0) return;
  throw new GhostcommitError(
    "plan-changed",
    `the rewind is no longer the one previewed: it would now ${changes.join(" and ")}; nothing was changed`,
    { session: where.session, turn: where.to },
  );
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * How a rewind's or redo's `steps` differ from the files the caller was shown: other files written
 * or deleted, or other conflicts overwritten (`overridden`, a forced one's). A file edited after a
 * forced preview would be overwritten unseen: "never silent" holds only for the conflicts the
 * person was shown. Lists the caller left out are not compared; `overridden` left out is none.
 */
export function otherFiles(
  expected: {
    written?: string[];
    deleted?: string[];
    overridden?: string[];
    overriddenState?: OverriddenState;
  },
  steps: PlanStep[],
  overridden: string[],
  since = "the turns",
  /** What the overwritten files hold now; left out (a resumed rewind): their states are not compared. */
  overriddenNow?: Map<string, string>,
): string[] {
  const done = stepPaths(steps);
  const sameSet = (wanted: string[] | undefined, now: string[]) =>
    wanted === undefined || sameList([...wanted].sort(), [...now].sort());
  const changes: string[] = [];
  if (!sameSet(expected.written, done.written) || !sameSet(expected.deleted, done.deleted))
    changes.push("write or delete other files");
  const overwrote = overwritten(overridden, done);
  if (!sameList([...(expected.overridden ?? [])].sort(), overwrote.sort()))
    changes.push(
      overwrote.length > 0
        ? `overwrite changes made since ${since} to ${overwrote.join(", ")}`
        : `overwrite no change made since ${since}`,
    );
  else {
    const again = overriddenNow ? changedSinceShown(expected.overriddenState, overriddenNow, overwrote) : [];
    if (again.length > 0) changes.push(`overwrite ${again.join(", ")}, edited again since the preview`);
  }
  return changes;
}

/**
 * Refuses named paths none of the rewound turns changed: such a rewind would put nothing back yet
 * record a rewind, which `redo` would then spend its next call undoing. (Paths that name nothing
 * at all are refused earlier, by refuseUnmatched.)
 */
export function refuseUnchanged(
  named: readonly RelPath[] | undefined,
  changed: readonly (readonly RelPath[])[],
  where: { session: string; turns: string[] },
): void {
  if (named === undefined) return;
  const all = changed.flat();
  const unchanged = named.filter((n) => !all.some((p) => isNamed(p, [n])));
  if (unchanged.length === 0) return;
  const turns =
    where.turns.length === 1
      ? `turn ${humanText(where.turns[0])}`
      : `turns ${where.turns.map(humanText).join(", ")}`;
  // A changed path above a named one is a submodule or nested repository the turns moved: the
  // named path is inside it, and a rewind never enters one.
  const inRepos = unchanged.flatMap((n) => {
    const repo = all.find((p) => p !== n && isNamed(n, [p]));
    return repo === undefined
      ? []
      : [
          `${unchanged.length === 1 ? "it" : quotedPath(displayPath(n))} is inside the repository ${quotedPath(displayPath(repo))}, which a rewind never enters`,
        ];
  });
  throw new GhostcommitError(
    "usage",
    `${unchanged.map((p) => quotedPath(displayPath(p))).join(", ")}: not changed by ${turns} of session ${humanText(where.session)}, so there is nothing to rewind there${inRepos.length > 0 ? ` (${inRepos.join("; ")})` : ""}`,
    { path: displayPath(unchanged[0]) },
  );
}

/**
 * Refuses a rewind of named paths that are all as they were before the turns already (an earlier
 * rewind of them, repeated, or put back by hand): it would write nothing yet record a rewind,
 * which the next `redo` would spend its call undoing, leaving the files rewound.
 */
export function refuseNothingToPutBack(
  named: readonly RelPath[] | undefined,
  pending: { changes: number; leftAlone: Iterable<RelPath> },
  where: { session: string; to: string },
): void {
  if (named === undefined || pending.changes > 0) return;
  // A named file left as it is (not captured before the turn, excluded since) is reported instead.
  for (const p of pending.leftAlone) if (isNamed(p, named)) return;
  throw new GhostcommitError(
    "bad-input",
    `${named.map((p) => quotedPath(displayPath(p))).join(", ")}: already as before turn ${humanText(where.to)} of session ${humanText(where.session)} (an earlier rewind put ${named.length === 1 ? "it" : "them"} back, or a person did), so there is nothing to rewind; nothing was recorded`,
    { session: where.session, turn: where.to },
  );
}

/**
 * The conflicts a forced rewind overwrites: those it writes or deletes. One it skips (excluded,
 * say, once its directory became a repository) is left as it is, so it is not reported as overwritten.
 */
export function overwritten(conflicts: string[], done: { written: string[]; deleted: string[] }): string[] {
  const changed = new Set([...done.written, ...done.deleted]);
  return conflicts.filter((p) => changed.has(p));
}

function stepPaths(steps: PlanStep[]): { written: string[]; deleted: string[] } {
  const of = (kind: PlanStep["kind"]) => steps.filter((s) => s.kind === kind).map((s) => displayPath(s.path));
  return { written: of("write"), deleted: of("delete") };
}

/** The refusal of a rewind with `conflicts`, each reason said. */
export async function rewindConflict(
  engine: SessionContext["engine"],
  cat: CatFile,
  where: { session: string; keptOpen?: string },
  states: PathStates[],
  conflicts: RelPath[],
  afterOf: (path: RelPath) => StoredSnapshot | null,
): Promise<GhostcommitError> {
  const uncertain = states.filter((s) => s.uncertain).map((s) => displayPath(s.path));
  const afterLastTool = states.filter((s) => s.afterLastTool).map((s) => displayPath(s.path));
  const ignoredAtEnd = await ignoredAtTurnEnd(engine, cat, states, conflicts, afterOf);
  const betweenTurns = states.filter((s) => s.betweenTurns).map((s) => displayPath(s.path));
  const why = { uncertain, afterLastTool, keptOpen: where.keptOpen, ignoredAtEnd, betweenTurns };
  return conflictError("rewind", where.session, conflicts.map(displayPath), why);
}

/**
 * Of a rewind's conflicts, the files on disk that the after-snapshot of the last rewound turn to
 * change them lacks because the repository ignored them then: a rule written during the turn (an
 * `out/` line in .gitignore) kept them from the turn's end, so what is there may well be the
 * turn's own work. The refusal says so instead of calling them changed since.
 */
async function ignoredAtTurnEnd(
  engine: SessionContext["engine"],
  cat: CatFile,
  states: PathStates[],
  conflicts: RelPath[],
  afterOf: (path: RelPath) => StoredSnapshot | null,
): Promise<string[]> {
  const conflicting = new Set(conflicts);
  const byAfter = new Map<StoredSnapshot, RelPath[]>();
  for (const s of states) {
    const after = afterOf(s.path);
    if (s.uncertain || s.expected !== null || s.current === null || !after || !conflicting.has(s.path))
      continue;
    if (leftOutBy(after.meta, s.path)) continue;
    byAfter.set(after, [...(byAfter.get(after) ?? []), s.path]);
  }
  const ignored: RelPath[] = [];
  for (const [after, paths] of byAfter)
    ignored.push(...(await unseenBy(engine, cat, after.tree, after.meta, paths)));
  return ignored.sort().map(displayPath);
}

/** A rewind to a turn already rewound: whether redo can still bring it back. */
export function alreadyRewound(state: SessionState, to: string): GhostcommitError {
  const redoable = state.redoStack.some((r) => r.turns.includes(to));
  const why = redoable
    ? "redo brings it back"
    : "a turn began after that rewind, so redo cannot bring it back";
  return new GhostcommitError(
    "bad-input",
    `turn ${humanText(to)} of session ${humanText(state.session)} is already rewound (${why})`,
    { session: state.session, turn: to },
  );
}
