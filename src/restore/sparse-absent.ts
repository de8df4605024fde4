import { promises as fs } from "node:fs";
import { hasUnsafeAncestor } from "../capture/read-worktree.js";
import { fsPath, type RelPath, relFromBytes } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import { fromTop, lsFiles } from "./excluded-now.js";
import type { PathChange, PlanStep } from "./plan.js";

/**
 * Files outside the sparse checkout: the index marks them skip-worktree and nothing is on disk
 * (`git sparse-checkout set` took them off, or a hand-marked file was deleted). A snapshot holds
 * such a file at its index content, so it cannot tell "not on disk"; restore, rewind and redo
 * leave it as it is (neither materialized outside the cone nor reported deleted), and a file they
 * leave is no conflict: nothing of the user's is on disk there to overwrite.
 * Only paths absent from disk are asked about, so the usual restore runs no git at all.
 */
export async function outsideSparseCheckout(engine: StoreContext, paths: RelPath[]): Promise<Set<RelPath>> {
  const found = new Set<RelPath>();
  const worktreeRoot = engine.location.worktreeRoot;
  if (engine.location.kind !== "git" || !worktreeRoot) return found;
  const absent: RelPath[] = [];
  for (const path of paths) {
    if (hasUnsafeAncestor(engine.root, path)) continue;
    const gone = await fs.lstat(fsPath(engine.root, path)).then(
      () => false,
      (error: NodeJS.ErrnoException) => error.code === "ENOENT" || error.code === "ENOTDIR",
    );
    if (gone) absent.push(path);
  }
  if (absent.length === 0) return found;
  const prefix = engine.location.prefix;
  // Cannot tell (git failed): none is taken for outside, so they stay ordinary paths as before.
  const listed = await lsFiles(worktreeRoot, prefix, ["-t"], absent).catch(() => [] as Buffer[]);
  const wanted = new Set(absent);
  for (const line of listed) {
    // `ls-files -t` tags a skip-worktree entry `S`; one record per stage, so a path may repeat.
    if (line[0] !== 0x53 || line[1] !== 0x20) continue;
    const path = fromTop(prefix, relFromBytes(line.subarray(2)));
    if (wanted.has(path)) found.add(path);
  }
  return found;
}

/**
 * `conflicts` less the files outside the sparse checkout: the restore leaves those as they are
 * (see skipOutsideSparseCheckout), so none can be a conflict, in a dry run or not, forced or not.
 */
export async function insideSparseCheckout(engine: StoreContext, conflicts: RelPath[]): Promise<RelPath[]> {
  if (conflicts.length === 0) return conflicts;
  const outside = await outsideSparseCheckout(engine, conflicts);
  return outside.size === 0 ? conflicts : conflicts.filter((p) => !outside.has(p));
}

/** Restore steps that would write or delete a file outside the sparse checkout, turned into skips (`excluded`). */
export async function skipOutsideSparseCheckout(
  engine: StoreContext,
  steps: PlanStep[],
  changes: PathChange[],
): Promise<PlanStep[]> {
  // The safety snapshot holds every file of the index, so only those it holds can be such files.
  const held = new Set(changes.filter((c) => c.current !== null).map((c) => c.path));
  const candidates = steps.filter((s) => s.kind !== "skip" && held.has(s.path)).map((s) => s.path);
  if (candidates.length === 0) return steps;
  const outside = await outsideSparseCheckout(engine, candidates);
  if (outside.size === 0) return steps;
  return steps.map((s) =>
    s.kind !== "skip" && outside.has(s.path)
      ? { kind: "skip", path: s.path, reason: "excluded", detail: "sparse-checkout" }
      : s,
  );
}
