import { TreeLookup } from "../git/tree-lookup.js";
import { GhostcommitError } from "../errors.js";
import { lstatSync } from "node:fs";
import { hasUnsafeAncestor } from "../capture/read-worktree.js";
import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import { entryAt } from "../git/trees.js";
import type { PathChange, PlanStep } from "./plan.js";
import {
  ancestorsOf,
  displayPath,
  fsPath,
  isWithin,
  type RelPath,
  resolveInside,
  SHOWN_REPLACEMENT,
} from "../paths.js";
import { quotedPath } from "../util/format.js";

/**
 * Resolves the paths a restore, rewind or diff is limited to. Relative paths are taken from the
 * workspace root; one outside the workspace (or in a `.git`) is a usage error, raised before
 * anything is written. They name entries of snapshots: a symlink inside the workspace is not
 * followed. Undefined means "everything" (an empty list is refused); so does naming the root itself.
 */
export function resolveNamedPaths(root: string, given: unknown): RelPath[] | undefined {
  if (given === undefined || given === null) return undefined;
  if (!Array.isArray(given) || given.some((p) => typeof p !== "string" || p === "")) {
    throw new GhostcommitError("usage", "paths must be a list of non-empty path strings");
  }
  // An empty list from a caller that meant "these files" must not restore the whole workspace.
  if (given.length === 0)
    throw new GhostcommitError("usage", "paths is an empty list: leave it out to act on every path");
  const resolved: RelPath[] = [];
  for (const path of given as string[]) {
    try {
      resolved.push(resolveInside(root, root, path, "keep"));
    } catch (error) {
      if (error instanceof GhostcommitError && error.code === "outside-workspace") {
        throw new GhostcommitError(
          "usage",
          `${error.message} (paths are relative to the workspace ${quotedPath(root)})`,
          {
            path,
          },
        );
      }
      throw error;
    }
  }
  return resolved.includes("") ? undefined : [...new Set(resolved)];
}

/** True when `path` is one of the named paths or lies below one (no names: everything). */
export function isNamed(path: RelPath, named: readonly RelPath[] | undefined): boolean {
  return named === undefined || named.some((dir) => isWithin(path, dir));
}

/**
 * The changes a restore limited to `named` acts on: those at or below a named path, plus a file
 * standing where the wanted state needs a directory for a named path (a file `d` in the way of
 * `d/x`): it is removed only so that the named path can be written.
 */
export function selectNamed<T extends { path: RelPath; target: unknown }>(
  changes: T[],
  named: readonly RelPath[] | undefined,
): T[] {
  if (named === undefined) return changes;
  const inside = changes.filter((c) => isNamed(c.path, named));
  const writes = inside.filter((c) => c.target !== null).map((c) => c.path);
  const inTheWay = changes.filter(
    (c) => !isNamed(c.path, named) && c.target === null && writes.some((w) => w.startsWith(`${c.path}/`)),
  );
  return [...inTheWay, ...inside];
}

/**
 * Refuses (usage) named paths that name nothing in `trees` nor, with `root`, in the workspace.
 * Returns the named paths, one that names nothing as given but was shown with U+FFFD for bytes
 * that are not UTF-8 (a picker's list, a copied line) taken as the one path it was shown for.
 */
export async function refuseUnmatched(
  named: readonly RelPath[] | undefined,
  cat: CatFile,
  trees: readonly string[],
  root: string | null,
): Promise<RelPath[] | undefined> {
  if (named === undefined) return undefined;
  const resolved: RelPath[] = [];
  const unmatched: RelPath[] = [];
  for (const rel of named) {
    let found = root !== null && onDisk(root, rel);
    for (const tree of trees) if (!found && (await entryAt(cat, tree, rel))) found = true;
    const shown = found ? [] : await shownAs(cat, trees, rel);
    if (found) resolved.push(rel);
    else if (shown.length === 1) resolved.push(shown[0]);
    else if (shown.length > 1)
      throw new GhostcommitError(
        "usage",
        `${quotedPath(displayPath(rel))}: ${shown.length} paths whose names are not UTF-8 are shown so; name a directory above them instead`,
        { path: displayPath(rel) },
      );
    else unmatched.push(rel);
  }
  if (unmatched.length === 0) return [...new Set(resolved)];
  const where = root === null ? "the snapshots" : "the snapshot or the workspace";
  throw new GhostcommitError(
    "usage",
    `${unmatched.map((p) => quotedPath(displayPath(p))).join(", ")}: no such path in ${where} (paths are not patterns)`,
    { path: displayPath(unmatched[0]) },
  );
}

/** The distinct paths of `trees` shown as `rel` (see TreeLookup.shownAs). */
async function shownAs(cat: CatFile, trees: readonly string[], rel: RelPath): Promise<RelPath[]> {
  if (!rel.includes(SHOWN_REPLACEMENT)) return [];
  const lookup = new TreeLookup(cat);
  const found = new Set<RelPath>();
  for (const tree of trees) for (const p of await lookup.shownAs(tree, rel)) found.add(p);
  return [...found];
}

/** Whether `rel` is in the workspace now, as a path of its own: not reached through a symlink. */
function onDisk(root: string, rel: RelPath): boolean {
  if (hasUnsafeAncestor(root, rel)) return false;
  try {
    lstatSync(fsPath(root, rel));
    return true;
  } catch {
    return false; // absent, or a file where one of its directories would be
  }
}

/**
 * Named paths on disk that neither the snapshot nor the workspace's capture holds (inside a
 * submodule or a nested repository, ignored and never included), with nothing changing at or
 * around them: a restore limited to them can change nothing there, and says so as skipped
 * (`excluded`) rather than "wrote 0 files". `trees`: the target's and the current capture's.
 * A submodule above the path that moved to another commit does not count as a change around it:
 * the restore enters no submodule, so the path is left as it is all the same.
 */
export async function namedOutsideCapture(
  named: readonly RelPath[] | undefined,
  cat: CatFile,
  trees: readonly string[],
  root: string,
  changed: readonly PathChange[],
): Promise<Extract<PlanStep, { kind: "skip" }>[]> {
  const skips: Extract<PlanStep, { kind: "skip" }>[] = [];
  for (const rel of named ?? []) {
    const around = changed.some(
      (c) => isWithin(c.path, rel) || (isWithin(rel, c.path) && !isGitlinkAbove(c, rel)),
    );
    if (around || !onDisk(root, rel)) continue;
    let held = false;
    for (const tree of trees) if (!held && (await entryAt(cat, tree, rel))) held = true;
    if (held) continue;
    let inSubmodule = false;
    for (const dir of ancestorsOf(rel)) {
      for (const tree of trees)
        if ((await entryAt(cat, tree, dir))?.mode === MODE.gitlink) inSubmodule = true;
    }
    skips.push({
      kind: "skip",
      path: rel,
      reason: "excluded",
      ...(inSubmodule ? { detail: "submodule" } : {}),
    });
  }
  return skips;
}

/** A submodule that holds `rel` (at or below it) on either side of a change. */
function isGitlinkAbove(change: PathChange, rel: RelPath): boolean {
  const gitlink = change.current?.mode === MODE.gitlink || change.target?.mode === MODE.gitlink;
  return gitlink && change.path !== rel;
}
