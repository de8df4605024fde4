import { lstatSync } from "node:fs";
import { looksLikeRepository } from "../capture/nested-check.js";
import { ancestorsOf, fsPath, type RelPath } from "../paths.js";
import type { PlanStep } from "./plan.js";

/**
 * Writes that what stands on disk would block, turned into skips (`excluded`) before anything
 * changes, so a dry run shows what the restore does and the restore keeps what it cannot replace:
 * below a file or symlink the plan does not delete (an ignored or too-large file where the target
 * has a directory), or inside a repository the capture did not look into. Done as the apply would
 * (see applyPlan): deletions first, then writes.
 */
export function skipBlockedWrites(
  root: string,
  steps: PlanStep[],
  capturedRepos: ReadonlySet<RelPath>,
): PlanStep[] {
  const deletes = new Set(steps.flatMap((s) => (s.kind === "delete" ? [s.path] : [])));
  const kept = new Set(
    steps.flatMap((s) =>
      s.kind === "write" && wayBlocked(root, s.path, deletes, capturedRepos) ? [s.path] : [],
    ),
  );
  if (kept.size === 0) return steps;
  return steps.map((s) =>
    s.kind === "write" && kept.has(s.path) ? { kind: "skip", path: s.path, reason: "excluded" } : s,
  );
}

/** A non-directory the plan leaves, or an uncaptured repository, on the way to `rel`. */
function wayBlocked(
  root: string,
  rel: RelPath,
  deletes: ReadonlySet<RelPath>,
  capturedRepos: ReadonlySet<RelPath>,
): boolean {
  for (const dir of ancestorsOf(rel)) {
    if (deletes.has(dir)) return false; // it goes first, and nothing below it stays
    const stat = lstatSync(fsPath(root, dir), { throwIfNoEntry: false });
    if (!stat) return false;
    if (!stat.isDirectory()) return true;
    if (!capturedRepos.has(dir) && looksLikeRepository(root, dir)) return true;
  }
  return false;
}
