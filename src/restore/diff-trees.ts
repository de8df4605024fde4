import { captureTree } from "../capture/snapshot.js";
import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import { TreeLookup } from "../git/tree-lookup.js";
import { ancestorsOf, type RelPath } from "../paths.js";
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
  work: (from: string, to: string, leftOut: LeftOut | undefined, named: RelPath[] | undefined) => Promise<T>,
): Promise<T> {
  // Refused before the ids are looked up (a repository's store goes with a deleted workspace), as
  // the command line refuses it before anything.
  engine.assertPresent();
  if (id2 === undefined) engine.assertCapturable();
  const from = await engine.refs.resolve(id);
  // Named paths must name something in these trees (or, against the working tree, in the workspace).
  const checked = async (a: string, b: string, leftOut?: LeftOut) => {
    const onDisk = id2 === undefined ? engine.root : null;
    if (named === undefined) return work(a, b, leftOut, named);
    const widened = await engine.withReader(async (cat) => {
      const holding = await submodulesHolding(cat, [a, b], named);
      const elsewhere = named.filter((p) => !holding.has(p));
      const matched = (await refuseUnmatched(elsewhere, cat, [a, b], onDisk)) ?? [];
      return [...new Set([...named.filter((p) => holding.has(p)), ...matched, ...holding.values()])];
    });
    return work(a, b, leftOut, widened);
  };
  if (id2 !== undefined) return checked(...sides(from, await engine.refs.resolve(id2)));
  return engine.capturing(async () => {
    const now = await engine.withReader((cat) => captureTree(engine, cat, from.meta.included));
    // As between snapshots: a file only one side left out (too large) is not deleted nor added.
    // Nor one on disk that the capture now leaves out unsaid (ignored since: a new .gitignore
    // line, a global excludes file), as a restore leaves it.
    const unreadable = new Set(now.excluded.filter((e) => e.reason === "unreadable").map((e) => e.path));
    const leftOut = {
      ...leftOutOf(from.meta.excluded, now.excluded),
      onDisk: { root: engine.root, unreadable },
    };
    return checked(from.tree, now.tree, leftOut);
  });
}

/**
 * The submodule (a gitlink in either tree) holding each named path inside one: a snapshot holds
 * only the commit a submodule is at, so what a diff can show of a file inside it is whether that
 * commit moved.
 */
async function submodulesHolding(
  cat: CatFile,
  trees: string[],
  named: RelPath[],
): Promise<Map<RelPath, RelPath>> {
  const lookup = new TreeLookup(cat);
  const holding = new Map<RelPath, RelPath>();
  const isGitlink = async (dir: RelPath) => {
    for (const tree of trees) if ((await lookup.entry(tree, dir))?.mode === MODE.gitlink) return true;
    return false;
  };
  for (const rel of named) {
    for (const dir of ancestorsOf(rel)) {
      if (await isGitlink(dir)) {
        holding.set(rel, dir);
        break;
      }
    }
  }
  return holding;
}
