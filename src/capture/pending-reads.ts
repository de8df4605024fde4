import type { RelPath } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";
import type { TreeChanges } from "../git/trees.js";
import { mapLimit } from "../util/pool.js";
import type { CaptureContext } from "./context.js";
import { captureWorktreePath } from "./read-worktree.js";

/** A path to read from the work tree; `limit` is the size bound (null for tracked files). */
export interface PendingRead {
  path: RelPath;
  limit: number | null;
  untracked: boolean;
  /** Only a readable file changes anything (files git did not report; e.g. sparse ones are absent). */
  verifyOnly?: boolean;
}

/** What a git capture's reads add to: the tree's changes, its exclusions, its included paths' fate. */
export interface ReadInto {
  changes: TreeChanges;
  excluded: StoredExclusion[];
  /** Paths captured because named (`--include`, touched), found captured or absent below. */
  included: RelPath[];
  capturedIncludes: Set<RelPath>;
  absentIncludes: Set<RelPath>;
}

/** Reads a batch of work-tree paths (8 at a time, through the store's stat cache) into `into`. */
export async function readPending(ctx: CaptureContext, batch: PendingRead[], into: ReadInto): Promise<void> {
  const { changes, excluded, included } = into;
  const results = await mapLimit(batch, 8, (read) =>
    captureWorktreePath(ctx.location.root, read.path, ctx.writer, ctx.cache, read.limit),
  );
  batch.forEach((read, i) => {
    const result = results[i];
    if (read.verifyOnly && result.kind !== "file") return;
    switch (result.kind) {
      case "file":
        changes.set(read.path, result.state);
        if (included.includes(read.path)) into.capturedIncludes.add(read.path);
        break;
      case "absent":
      case "directory":
        if (result.kind === "absent" && included.includes(read.path)) into.absentIncludes.add(read.path);
        if (!read.untracked) changes.set(read.path, null);
        break;
      case "large":
        excluded.push({ path: read.path, reason: "large-file", bytes: result.size, files: 1 });
        if (!read.untracked) changes.set(read.path, null);
        break;
      case "unreadable":
      case "special":
        excluded.push({ path: read.path, reason: "unreadable" });
        // Its content now is unknown: the snapshot does not claim the committed one (a restore
        // of it would put that back), and a restore leaves the file, listing it as excluded.
        if (!read.untracked) changes.set(read.path, null);
        break;
    }
  });
}
