import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import { entryAt, filesBelow, type TreeChanges } from "../git/trees.js";
import { isWithin, type RelPath } from "../paths.js";

/**
 * A directory status could not list, a tracked file it could not stat (`unreadable`): their
 * content is not what HEAD holds as far as anyone knows (git could not look), so the snapshot
 * holds none of it, as it holds no untracked file there; `excluded` says so, and a restore leaves
 * them as they are. Edits `changes` and `inBase` to take them out of the tree; returns how many
 * of HEAD's files that leaves out.
 */
export async function leaveOutUnreadable(
  cat: CatFile,
  baseTree: string | null,
  unreadable: readonly RelPath[],
  changes: TreeChanges,
  inBase: Map<RelPath, boolean>,
): Promise<number> {
  let unlisted = 0;
  for (const rel of unreadable) {
    for (const p of [...changes.keys()]) if (isWithin(p, rel)) changes.delete(p);
    const entry = rel === "" ? null : await entryAt(cat, baseTree, rel);
    if (!entry) continue;
    changes.set(rel, null);
    inBase.set(rel, false);
    unlisted += entry.mode === MODE.tree ? await filesBelow(cat, entry.oid) : 1;
  }
  return unlisted;
}
