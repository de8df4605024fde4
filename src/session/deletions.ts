import type { StoreContext } from "../store/context.js";
import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import { ancestorsOf, isWithin, type RelPath } from "../paths.js";
import {
  belowUnknownGitignore,
  ghostignoredAtTarget,
  ignoredAtTarget,
  ignoreScope,
} from "../restore/ignored-at-target.js";
import { rulesOfSnapshot } from "../capture/outside-rules.js";
import { proveAbsent } from "../restore/plan.js";
import type { StoredSnapshot } from "../store/store.js";
import { sameState, type TreeLookup } from "../git/tree-lookup.js";

/** Where a deletion candidate's wanted absence comes from. */
export interface AbsenceSource {
  snapshot: StoredSnapshot;
  /** Paths a touch proved absent in that before-state although the snapshot did not look at them. */
  absent: ReadonlySet<RelPath>;
}

/**
 * Deletion needs proof: a path absent from the turn's before snapshot is deleted only
 * when that snapshot would have captured it had it existed (not excluded, not ignored nor
 * matched by its `.ghostignore` then), or
 * when a touch recorded it as absent. Candidates are grouped by the snapshot that decides them.
 */
export async function proveDeletions(
  engine: StoreContext,
  cat: CatFile,
  lookup: TreeLookup,
  currentTree: string,
  capturedRepos: readonly RelPath[],
  candidates: RelPath[],
  sourceOf: (path: RelPath) => AbsenceSource,
): Promise<Set<RelPath>> {
  const proven = new Set<RelPath>();
  const scopeNow = ignoreScope(engine.location.kind, capturedRepos);
  const groups = new Map<StoredSnapshot, RelPath[]>();
  for (const p of candidates) {
    const source = sourceOf(p);
    // Proven absent by a touch, unless in a repository made since: its files all stay (see below).
    if (source.absent.has(p) && !inRepositorySince(p, source.snapshot, capturedRepos)) {
      proven.add(p);
      continue;
    }
    const list = groups.get(source.snapshot) ?? [];
    list.push(p);
    groups.set(source.snapshot, list);
  }
  for (const [snapshot, paths] of groups) {
    const scopeOf = ignoreScope(engine.location.kind, snapshot.meta.nested);
    const fileInTarget = new Set<RelPath>();
    const reposInTarget: RelPath[] = []; // not looked into then: proves nothing below
    const changedIgnores = new Set<RelPath>();
    let rescoped = false; // a repository then, its rules no longer read (its .git removed)
    for (const p of paths) {
      for (const dir of ancestorsOf(p)) {
        const entry = await lookup.entry(snapshot.tree, dir);
        // A gitlink (a repository nested there) is no file: it proves nothing about paths below it.
        if (entry?.mode === MODE.gitlink) reposInTarget.push(dir);
        else if (entry && entry.mode !== MODE.tree) fileInTarget.add(dir);
      }
      if (scopeOf(p) === null) continue;
      if (scopeOf(p) !== scopeNow(p)) rescoped = true;
      for (const dir of ["", ...ancestorsOf(p)]) {
        const rules = dir === "" ? ".gitignore" : `${dir}/.gitignore`;
        if (changedIgnores.has(rules)) continue;
        const then = await lookup.file(snapshot.tree, rules);
        if (!sameState(then, await lookup.file(currentTree, rules))) changedIgnores.add(rules);
      }
    }
    const then = await rulesOfSnapshot(engine.location, engine.paths.dir, snapshot.meta.outside);
    const ignored =
      changedIgnores.size > 0 || rescoped || then.git !== undefined
        ? await ignoredAtTarget(
            cat,
            snapshot.tree,
            paths,
            changedIgnores,
            scopeOf,
            scopeNow,
            then.ignoreCase,
            then.git,
          )
        : new Set<RelPath>();
    const excludedThen = snapshot.meta.excluded.map((e) => e.path);
    const ghostignored = await ghostignoredAtTarget(
      cat,
      snapshot.tree,
      excludedThen,
      then.ignoreCase,
      paths,
      then.ghost,
    );
    // A repository captured now that the snapshot did not look into (made or cloned since): as for
    // a restore, its absence then proves nothing, and its .git would stay beside emptied files.
    const reposSince = reposMadeSince(snapshot, capturedRepos);
    const excluded = [...excludedThen, ...reposInTarget, ...reposSince];
    const rulesUnknown = belowUnknownGitignore(excludedThen);
    const unproven = (q: RelPath) => ignored.has(q) || ghostignored(q) || rulesUnknown(q);
    for (const p of proveAbsent(paths, fileInTarget, excluded, unproven)) proven.add(p);
  }
  return proven;
}

/** The repositories captured now that `snapshot` did not look into: made or cloned since. */
function reposMadeSince(snapshot: StoredSnapshot, capturedRepos: readonly RelPath[]): RelPath[] {
  const lookedInto = new Set(snapshot.meta.nested ?? []);
  return capturedRepos.filter((r) => !lookedInto.has(r));
}

function inRepositorySince(p: RelPath, snapshot: StoredSnapshot, capturedRepos: readonly RelPath[]): boolean {
  return reposMadeSince(snapshot, capturedRepos).some((r) => isWithin(p, r));
}
