import { MODE } from "../git/objects.js";
import type { TreeLookup } from "../git/tree-lookup.js";
import { ancestorsOf, type RelPath } from "../paths.js";
import type { PathChange } from "../restore/plan.js";

/**
 * What stands in the way of a rewind's or redo's writes and is in the capture taken just before
 * it (so its safety snapshot holds it): a file or symlink on the way to a file it writes (where
 * the target has a directory), or files below a directory where it writes a file. Nothing the
 * turns changed, so someone put them there since: they are conflicts, and a forced rewind or redo
 * deletes them first, as a restore of the target would (the safety snapshot brings them back).
 * A submodule is never entered or removed, and what the capture left out (ignored, too large) is
 * not known to be replaceable: the plan leaves the writes those block, saying so.
 */
export async function obstructions(
  changes: readonly PathChange[],
  currentTree: string,
  lookup: TreeLookup,
): Promise<PathChange[]> {
  const planned = new Set(changes.map((c) => c.path));
  const found = new Map<RelPath, PathChange>();
  const block = (path: RelPath, current: PathChange["current"]) => {
    if (!planned.has(path)) found.set(path, { path, current, target: null });
  };
  for (const change of changes) {
    if (change.target === null) continue;
    for (const dir of ancestorsOf(change.path)) {
      if (planned.has(dir) || found.has(dir)) break;
      const current = await lookup.file(currentTree, dir);
      if (current === null) continue; // a directory, or nothing: the apply makes it
      if (current.mode !== MODE.gitlink) block(dir, current);
      break;
    }
    if (change.target.mode === MODE.gitlink) continue; // a submodule's gitlink is never written
    const below = await lookup.filesBelow(currentTree, change.path);
    if ([...below.values()].some((state) => state.mode === MODE.gitlink)) continue;
    for (const [path, state] of below) block(path, state);
  }
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A forced rewind's or redo's plan with `blockers` deleted first (proven absent: the target has no file there). */
export function clearFirst(blockers: PathChange[], changes: PathChange[], provenAbsent: Set<RelPath>): void {
  for (const blocker of blockers) {
    changes.push(blocker);
    provenAbsent.add(blocker.path);
  }
}
