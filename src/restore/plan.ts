import type { FileState } from "../git/trees.js";
import { MODE } from "../git/objects.js";
import { GhostcommitError } from "../errors.js";
import { ancestorsOf, displayPath, isCleanRel, isWithin, type RelPath, touchesGitDir } from "../paths.js";
import { quotedPath } from "../util/format.js";
import type { ExcludedDetail, SkipReason } from "../types.js";

/** A path whose state differs between now (the safety snapshot) and what the restore wants. */
export interface PathChange {
  path: RelPath;
  /** State in the safety snapshot (what is there now), null when absent from it. */
  current: FileState | null;
  /** Wanted state, null for "should not exist". */
  target: FileState | null;
}

export interface PlanInput {
  changes: PathChange[];
  /** Paths the wanted state proves absent (deletion needs proof). */
  provenAbsent: ReadonlySet<RelPath>;
  /** Paths that exist on disk although the safety snapshot does not hold them (ignored or excluded now). */
  /** Paths on disk the current capture lacks, with why where it is known. */
  presentUncaptured: ReadonlyMap<RelPath, ExcludedDetail | null>;
  /** Paths restore must never touch (.ghostignore matches, excluded now). */
  untouchable: (path: RelPath) => boolean;
}

export type PlanStep =
  | { kind: "write"; path: RelPath; state: FileState }
  | { kind: "delete"; path: RelPath }
  | { kind: "skip"; path: RelPath; reason: SkipReason; detail?: ExcludedDetail; errno?: string };

/**
 * Decides, per path, what a restore does. Pure: the rules of restore in one place. Deletions
 * come first, deepest first, so a directory can replace a file (and the reverse); then writes.
 */
export function planRestore(input: PlanInput): PlanStep[] {
  const deletes: PlanStep[] = [];
  const writes: PlanStep[] = [];
  const skips: PlanStep[] = [];
  for (const change of input.changes) {
    const { path, current, target } = change;
    // Only a forged or damaged snapshot (a fetched one) holds such a name: nothing is written.
    if (!isCleanRel(path))
      throw new GhostcommitError(
        "store-damaged",
        `a snapshot holds a path outside the workspace, ${quotedPath(displayPath(path))} (forged or damaged): nothing was changed`,
      );
    if (touchesGitDir(path)) {
      skips.push({ kind: "skip", path, reason: "excluded" });
      continue;
    }
    if (input.untouchable(path)) {
      skips.push({ kind: "skip", path, reason: "excluded", detail: "ghostignore" });
      continue;
    }
    if (current?.mode === MODE.gitlink || target?.mode === MODE.gitlink) {
      // Submodules are never entered: one at another commit than the target's is said to be left.
      if (!sameGitlink(current, target))
        skips.push({ kind: "skip", path, reason: "excluded", detail: "submodule" });
      continue;
    }
    if (target === null) {
      if (current === null) continue;
      if (input.provenAbsent.has(path)) deletes.push({ kind: "delete", path });
      else skips.push({ kind: "skip", path, reason: "excluded" });
      continue;
    }
    if (current === null && input.presentUncaptured.has(path)) {
      // Overwriting it could not be undone: the safety snapshot does not hold it.
      const detail = input.presentUncaptured.get(path);
      skips.push({ kind: "skip", path, reason: "excluded", ...(detail ? { detail } : {}) });
      continue;
    }
    if (current && current.mode === target.mode && current.oid === target.oid) continue;
    writes.push({ kind: "write", path, state: target });
  }
  deletes.sort((a, b) => depth(b.path) - depth(a.path) || (a.path < b.path ? -1 : 1));
  writes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return [...deletes, ...writes, ...skips];
}

function depth(path: RelPath): number {
  return path.split("/").length;
}

/**
 * Paths a snapshot proves absent: the snapshot would have captured them had they existed.
 * `fileInTarget` holds paths that are files in the target; a file there proves nothing can exist
 * below it. `excludedInTarget` are the snapshot's exclusions; `ignoredInTarget` answers whether
 * the path was ignored under the target's ignore rules.
 */
export function proveAbsent(
  candidates: RelPath[],
  fileInTarget: ReadonlySet<RelPath>,
  excludedInTarget: RelPath[],
  ignoredInTarget: (path: RelPath) => boolean,
): Set<RelPath> {
  const proven = new Set<RelPath>();
  for (const path of candidates) {
    if (touchesGitDir(path)) continue;
    if (ancestorsOf(path).some((dir) => fileInTarget.has(dir))) {
      proven.add(path);
      continue;
    }
    if (excludedInTarget.some((dir) => isWithin(path, dir))) continue;
    if (ignoredInTarget(path)) continue;
    proven.add(path);
  }
  return proven;
}

function sameGitlink(
  a: { mode: string; oid: string } | null,
  b: { mode: string; oid: string } | null,
): boolean {
  return a !== null && b !== null && a.mode === b.mode && a.oid === b.oid;
}
