import { linkSync, lstatSync, renameSync, rmSync } from "node:fs";
import path from "node:path";

/**
 * A borrowed pack is judged by the file, not its name: git names a pack after its checksum, so
 * the user's `git gc` or `git repack -ad` on unchanged content writes a new file under the same
 * name. The store's link then holds the old file alone (a private copy of the whole pack) while
 * the name still matches, and nothing would ever free it.
 */

/** Whether two paths name the same file (same device and inode). */
export function sameFile(a: string, b: string): boolean {
  const x = lstatSync(a, { throwIfNoEntry: false });
  const y = lstatSync(b, { throwIfNoEntry: false });
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

/**
 * Where the user's pack `base` is another file than the store's same-named one, the store's is
 * replaced by a link to the user's. Same name, same checksum: the same bytes, so the swap changes
 * no object a snapshot reads (a reader that opened the old file keeps it until it closes). Only
 * done when both the pack's and the index's sizes match; otherwise gc releases the old copy.
 * True when the store's files are links to the user's now. EXDEV propagates.
 */
export function relinkRewrittenPack(userPacks: string, ourPacks: string, base: string): boolean {
  const files = [`${base}.pack`, `${base}.idx`];
  const pairs = files.map((name) => ({
    theirs: lstatSync(path.join(userPacks, name), { throwIfNoEntry: false }),
    ours: lstatSync(path.join(ourPacks, name), { throwIfNoEntry: false }),
    name,
  }));
  if (pairs.some((p) => !p.theirs || !p.ours)) return false;
  if (pairs.every((p) => p.theirs?.dev === p.ours?.dev && p.theirs?.ino === p.ours?.ino)) return true;
  if (pairs.some((p) => p.theirs?.size !== p.ours?.size)) return false;
  for (const { name } of pairs) {
    const target = path.join(ourPacks, name);
    // Not a name git reads as a pack (no .pack/.idx end), so a crash between the two calls leaves
    // only a harmless extra link.
    const temp = `${target}.relink-${process.pid}`;
    rmSync(temp, { force: true });
    try {
      linkSync(path.join(userPacks, name), temp);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false; // the user's gc again
      throw error;
    }
    renameSync(temp, target);
  }
  return true;
}
