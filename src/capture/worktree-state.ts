import { type BigIntStats, promises as fs } from "node:fs";
import { HashCache } from "./hash-cache.js";
import { hasUnsafeAncestor, modeOf } from "./read-worktree.js";
import type { FileState } from "../git/trees.js";
import type { StoreContext } from "../store/context.js";
import { objectId } from "../git/objects.js";
import { fsPath, type RelPath } from "../paths.js";

/**
 * The state of a few work-tree paths as a snapshot would record them, hashed in memory and
 * never written to any object store. Lets rewind and redo refuse a conflict before they take a
 * safety snapshot. `undefined` means "cannot tell cheaply" (large, unreadable, special files):
 * the authoritative check against the safety snapshot decides those.
 */
export async function worktreeStates(
  engine: StoreContext,
  paths: RelPath[],
): Promise<Map<RelPath, FileState | null | undefined>> {
  const cache = new HashCache(engine.paths.dir);
  await cache.load();
  const out = new Map<RelPath, FileState | null | undefined>();
  for (const rel of paths) out.set(rel, await stateOf(engine, cache, rel));
  return out;
}

async function stateOf(
  engine: StoreContext,
  cache: HashCache,
  rel: RelPath,
): Promise<FileState | null | undefined> {
  const file = fsPath(engine.root, rel);
  if (hasUnsafeAncestor(engine.root, rel)) return null;
  let stat: BigIntStats;
  try {
    stat = await fs.lstat(file, { bigint: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? null : undefined;
  }
  if (stat.isDirectory()) return null;
  try {
    if (stat.isSymbolicLink()) {
      return { mode: modeOf(stat), oid: objectId("blob", await fs.readlink(file, { encoding: "buffer" })) };
    }
    if (!stat.isFile() || Number(stat.size) > engine.settings.largeFileBytes) return undefined;
    const cached = cache.lookup(rel, stat);
    if (cached) return { mode: modeOf(stat), oid: cached };
    return { mode: modeOf(stat), oid: objectId("blob", await fs.readFile(file)) };
  } catch {
    return undefined;
  }
}
