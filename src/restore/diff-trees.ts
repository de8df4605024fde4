import { captureTree } from "../capture/snapshot.js";
import type { RelPath } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import { refuseUnmatched } from "./path-filter.js";
import { type LeftOut, leftOutOf, sides } from "./tree-diff.js";

/**
 * Runs `work` on the two trees of a diff (snapshot `id` to `id2`, or to the working tree), once
 * `named` paths are known to name something. The working tree is captured without a snapshot: its
 * objects are unreachable, so the work runs under the store's write lock, where gc cannot prune them.
 */
export async function withDiffTrees<T>(
  engine: StoreContext,
  id: string,
  id2: string | undefined,
  named: RelPath[] | undefined,
  work: (from: string, to: string, leftOut?: LeftOut) => Promise<T>,
): Promise<T> {
  // Refused before the ids are looked up (a repository's store goes with a deleted workspace), as
  // the command line refuses it before anything.
  engine.assertPresent();
  if (id2 === undefined) engine.assertCapturable();
  const from = await engine.refs.resolve(id);
  // Named paths must name something in these trees (or, against the working tree, in the workspace).
  const checked = async (a: string, b: string, leftOut?: LeftOut) => {
    const onDisk = id2 === undefined ? engine.root : null;
    if (named !== undefined) await engine.withReader((cat) => refuseUnmatched(named, cat, [a, b], onDisk));
    return work(a, b, leftOut);
  };
  if (id2 !== undefined) return checked(...sides(from, await engine.refs.resolve(id2)));
  return engine.capturing(async () => {
    const now = await engine.withReader((cat) => captureTree(engine, cat, from.meta.included));
    // As between snapshots: a file only one side left out (too large) is not deleted nor added.
    return checked(from.tree, now.tree, leftOutOf(from.meta.excluded, now.excluded));
  });
}
