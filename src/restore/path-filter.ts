import { GhostcommitError } from "../errors.js";
import { isWithin, type RelPath, resolveInside } from "../paths.js";

/**
 * Resolves the paths a restore, rewind or diff is limited to. Relative paths are taken from the
 * workspace root; one outside the workspace (or in a `.git`) is a usage error, raised before
 * anything is written. They name entries of snapshots: a symlink inside the workspace is not
 * followed. Undefined or empty means "everything"; so does naming the root itself.
 */
export function resolveNamedPaths(root: string, given: unknown): RelPath[] | undefined {
  if (given === undefined || given === null) return undefined;
  if (!Array.isArray(given) || given.some((p) => typeof p !== "string" || p === "")) {
    throw new GhostcommitError("usage", "paths must be a list of non-empty path strings");
  }
  if (given.length === 0) return undefined;
  const resolved: RelPath[] = [];
  for (const path of given as string[]) {
    try {
      resolved.push(resolveInside(root, root, path, "keep"));
    } catch (error) {
      if (error instanceof GhostcommitError && error.code === "outside-workspace") {
        throw new GhostcommitError(
          "usage",
          `${error.message} (paths are relative to the workspace ${root})`,
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
