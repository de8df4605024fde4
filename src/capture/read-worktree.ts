import { type BigIntStats, promises as fs, lstatSync, type Stats } from "node:fs";
import { MODE } from "../git/objects.js";
import type { LooseObjectWriter } from "../git/loose-objects.js";
import { fsPath, type RelPath } from "../paths.js";
import type { HashCache } from "./hash-cache.js";
import type { FileState } from "../git/trees.js";

/** What a path in the work tree turned out to be when ghostcommit went to capture it. */
export type WorktreeRead =
  | { kind: "file"; state: FileState; size: number }
  | { kind: "absent" }
  | { kind: "directory" }
  | { kind: "large"; size: number }
  | { kind: "unreadable" }
  | { kind: "special" };

/** Git's mode for what lstat saw: symlinks as links, the owner's execute bit as 100755. */
export function modeOf(stat: BigIntStats): string {
  if (stat.isSymbolicLink()) return MODE.link;
  return (stat.mode & 0o100n) !== 0n ? MODE.exec : MODE.file;
}

/**
 * Stores one work-tree path as a blob, byte for byte: a symlink's target (never followed), a
 * file's raw content. `largeLimit` (bytes) applies to untracked and touched files only.
 */
export async function captureWorktreePath(
  root: string,
  rel: RelPath,
  writer: LooseObjectWriter,
  cache: HashCache,
  largeLimit: number | null,
): Promise<WorktreeRead> {
  const file = fsPath(root, rel);
  for (let attempt = 0; attempt < 3; attempt++) {
    let stat: BigIntStats;
    try {
      stat = lstatSync(file, { bigint: true }); // sync: cheaper than a thread-pool trip per file
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === "ENOENT" || code === "ENOTDIR" ? { kind: "absent" } : { kind: "unreadable" };
    }
    if (stat.isDirectory()) return { kind: "directory" };
    const size = Number(stat.size);
    try {
      if (stat.isSymbolicLink()) {
        const target = await fs.readlink(file, { encoding: "buffer" });
        return { kind: "file", state: { mode: MODE.link, oid: await writer.write("blob", target) }, size };
      }
      if (!stat.isFile()) return { kind: "special" };
      if (largeLimit !== null && size > largeLimit) return { kind: "large", size };
      const mode = modeOf(stat);
      const cached = cache.lookup(rel, stat);
      // Trust a cached id only while its object is there (a gc may have pruned it); freshening
      // it also keeps a concurrent prune from taking it before this snapshot's ref exists.
      if (cached && (await writer.freshen(cached)))
        return { kind: "file", state: { mode, oid: cached }, size };
      const oid = await writer.writeFileBlob(file, size);
      if (oid === null) continue; // changed while being read: look again
      cache.remember(rel, stat, oid);
      return { kind: "file", state: { mode, oid }, size };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "absent" };
      if (
        code === "EACCES" ||
        code === "EPERM" ||
        code === "EISDIR" ||
        code === "ELOOP" ||
        code === "ENAMETOOLONG" ||
        code === "EIO" ||
        code === "ENXIO"
      ) {
        return { kind: "unreadable" };
      }
      throw error;
    }
  }
  return { kind: "unreadable" };
}

/**
 * True when some ancestor directory of rel (below root) is a symlink or not a directory.
 * Synchronous: a hook checks the one path it was given, and each thread-pool round trip cost more
 * than the `lstat` itself.
 */
export function hasUnsafeAncestor(root: string, rel: RelPath): boolean {
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    let stat: Stats | undefined;
    try {
      stat = lstatSync(fsPath(root, parts.slice(0, i).join("/")), { throwIfNoEntry: false });
    } catch {
      return false; // unreadable: what is below it cannot be read either
    }
    if (stat === undefined) return false; // missing: nothing below it exists either
    if (!stat.isDirectory()) return true;
  }
  return false;
}
