import { type Dirent, lstatSync, readdirSync, type Stats } from "node:fs";
import { looksLikeRepository } from "../capture/nested-check.js";
import { ancestorsOf, fsPath, isWithin, type RelPath, relFromBytes } from "../paths.js";
import type { PlanStep } from "./plan.js";

/**
 * Writes that what stands on disk would block, turned into skips (`excluded`) before anything
 * changes, so a dry run shows what the restore does and the restore keeps what it cannot replace:
 * - below a file or symlink the plan does not delete (an ignored or too-large file where the
 *   target has a directory), or inside a repository the capture did not look into;
 * - over a directory that would still hold something once the plan's deletions are done (an
 *   ignored file where the target has a file): the deletions inside it are skipped too, so the
 *   directory is left whole rather than stripped of its captured files for a write that fails.
 * Done as the apply would (see applyPlan): deletions first, then the directories they empty.
 */
export function skipBlockedWrites(
  root: string,
  steps: PlanStep[],
  capturedRepos: ReadonlySet<RelPath>,
): PlanStep[] {
  const deletes = new Set(steps.flatMap((s) => (s.kind === "delete" ? [s.path] : [])));
  const kept: RelPath[] = [];
  // Writes share their directories: each is looked at once, not once per file below it.
  const seen = new Map<RelPath, Standing>();
  for (const step of steps) {
    if (step.kind !== "write") continue;
    const way = wayTo(root, step.path, deletes, capturedRepos, seen);
    if (way === "blocked") kept.push(step.path);
    else if (way === "dirs" && statOf(root, step.path)?.isDirectory()) {
      if (!emptiedBy(root, step.path, deletes).emptied) kept.push(step.path);
    }
  }
  if (kept.length === 0) return steps;
  const keptWrites = new Set(kept);
  const skipped = (s: PlanStep) =>
    (s.kind === "write" && keptWrites.has(s.path)) ||
    (s.kind === "delete" && kept.some((dir) => isWithin(s.path, dir)));
  return steps.map((s) => (skipped(s) ? { kind: "skip", path: s.path, reason: "excluded" } : s));
}

/**
 * The way to `rel`: blocked by a non-directory the plan leaves or an uncaptured repository;
 * clear of anything (an ancestor is missing, or deleted first with all below it); or real
 * directories all the way, so something may stand at `rel` itself.
 */
function wayTo(
  root: string,
  rel: RelPath,
  deletes: ReadonlySet<RelPath>,
  capturedRepos: ReadonlySet<RelPath>,
  seen: Map<RelPath, Standing>,
): "blocked" | "clear" | "dirs" {
  for (const dir of ancestorsOf(rel)) {
    if (deletes.has(dir)) return "clear";
    let standing = seen.get(dir);
    if (standing === undefined) {
      standing = standingAt(root, dir, capturedRepos);
      seen.set(dir, standing);
    }
    if (standing === "missing") return "clear";
    if (standing === "blocked") return "blocked";
  }
  return "dirs";
}

type Standing = "missing" | "blocked" | "directory";

/** What stands at a directory on a write's way: nothing, something that blocks it, or a directory. */
function standingAt(root: string, dir: RelPath, capturedRepos: ReadonlySet<RelPath>): Standing {
  const stat = statOf(root, dir);
  if (!stat) return "missing";
  if (!stat.isDirectory()) return "blocked";
  return !capturedRepos.has(dir) && looksLikeRepository(root, dir) ? "blocked" : "directory";
}

/**
 * Whether the plan's deletions leave `dir` empty, and whether any happens below it: a directory
 * is removed only when a deletion emptied it, so an empty one with none below it stays. One that
 * cannot be listed holds what no capture could read: it stays.
 */
function emptiedBy(
  root: string,
  dir: RelPath,
  deletes: ReadonlySet<RelPath>,
): { emptied: boolean; any: boolean } {
  let entries: Dirent<Buffer>[];
  try {
    entries = readdirSync(fsPath(root, dir), { withFileTypes: true, encoding: "buffer" });
  } catch {
    return { emptied: false, any: false };
  }
  let any = false;
  for (const entry of entries) {
    const rel = `${dir}/${relFromBytes(entry.name)}`;
    const below = entry.isDirectory() ? emptiedBy(root, rel, deletes) : null;
    if (below ? !(below.emptied && below.any) : !deletes.has(rel)) return { emptied: false, any };
    any = true;
  }
  return { emptied: true, any };
}

/** What stands at `rel`; nothing when it cannot be seen: the apply then reports what the system says. */
function statOf(root: string, rel: RelPath): Stats | undefined {
  try {
    return lstatSync(fsPath(root, rel), { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
