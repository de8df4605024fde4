import { MODE } from "../git/objects.js";
import { editTree, entryAt, type TreeChanges } from "../git/trees.js";
import type { RelPath } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";
import { mapLimit } from "../util/pool.js";
import { trace } from "../util/trace.js";
import type { CaptureContext } from "./context.js";
import { captureWorktreePath } from "./read-worktree.js";

/**
 * A plain directory's later snapshot without writing the store's index. Every file the index
 * does not vouch for (what `diff-files` and the walk reported, changed since the index was last
 * written) is read through the hash cache, and the snapshot's tree is the index's tree edited
 * along those paths, as a repository's snapshot edits HEAD's tree. Rewriting a 50k-entry index
 * twice (`update-index`, `write-tree`) cost more than the rest of such a snapshot; the index is
 * written again once this many paths are outstanding, so what is read again stays small.
 */
export const DEFERRED_PATHS_LIMIT = 400;

export interface OverIndexTree {
  /** The tree the store's index holds (`write-tree` of it, recorded when it was written). */
  indexTree: string;
  /** How many entries the index holds. */
  indexFiles: number;
  /** Paths to capture from the work tree, and whether the index names each (null: unknown). */
  reads: PathInIndex[];
  /** Paths to leave out (deleted, excluded, now a directory). */
  removals: PathInIndex[];
  /** Files of nested repositories, captured by their own rules. */
  nestedFiles: TreeChanges;
}

export interface PathInIndex {
  path: RelPath;
  indexed: boolean | null;
}

export interface OverIndexResult {
  tree: string;
  fileCount: number;
  excluded: StoredExclusion[];
  captured: Set<RelPath>;
  /** Files the tree holds that the index does not, and index files it left out. */
  added: RelPath[];
  removed: RelPath[];
}

export async function captureOverIndexTree(
  ctx: CaptureContext,
  input: OverIndexTree,
): Promise<OverIndexResult> {
  const { cat, writer } = ctx;
  const { indexTree } = input;
  const changes: TreeChanges = new Map();
  const excluded: StoredExclusion[] = [];
  const captured = new Set<RelPath>();
  const added: RelPath[] = [];
  const removed: RelPath[] = [];
  let fileCount = input.indexFiles;
  // What the index's tree holds at the path; looked up where the caller cannot say.
  const heldAs = async (path: RelPath, indexed: boolean | null): Promise<"file" | "directory" | null> => {
    if (indexed !== null) return indexed ? "file" : null;
    const entry = await entryAt(cat, indexTree, path);
    return entry === null ? null : entry.mode === MODE.tree ? "directory" : "file";
  };
  // A path leaves the tree only as a file, as `update-index --force-remove` would remove it: the
  // files below a directory of that name are removed by their own paths (`diff-files` reports each).
  const remove = (path: RelPath, held: "file" | "directory" | null) => {
    if (held === "directory") return;
    changes.set(path, null);
    if (held !== "file") return;
    fileCount--;
    removed.push(path);
  };
  for (const { path, indexed } of input.removals) remove(path, await heldAs(path, indexed));
  const results = await mapLimit(input.reads, 8, (read) =>
    captureWorktreePath(ctx.location.root, read.path, writer, ctx.cache, ctx.settings.largeFileBytes),
  );
  for (let i = 0; i < input.reads.length; i++) {
    const { path, indexed } = input.reads[i];
    const result = results[i];
    const held = await heldAs(path, indexed);
    switch (result.kind) {
      case "file":
        changes.set(path, result.state);
        captured.add(path);
        if (held === "file") break;
        fileCount++;
        added.push(path);
        break;
      case "large":
        excluded.push({ path, reason: "large-file", bytes: result.size, files: 1 });
        remove(path, held);
        break;
      case "special":
        excluded.push({ path, reason: "unreadable" });
        remove(path, held);
        break;
      case "unreadable":
        // Keeps its last captured content, as the index-writing path does.
        excluded.push({ path, reason: "unreadable" });
        break;
      default: // gone, or a directory now (its files are read by their own paths)
        remove(path, held);
    }
  }
  for (const [path, state] of input.nestedFiles) changes.set(path, state);
  const tree = await editTree(cat, writer, indexTree, changes);
  trace(`capture: plain index left as it is, ${input.reads.length} paths read`);
  return { tree, fileCount: Math.max(0, fileCount), excluded, captured, added, removed };
}
