import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { MODE } from "../git/objects.js";
import { restoreTempName } from "../store/restore-journal.js";
import { ancestorsOf, fsPath, parentOf, type RelPath } from "../paths.js";
import type { SkipReason } from "../types.js";
import type { PlanStep } from "./plan.js";

export interface ApplyOutcome {
  written: RelPath[];
  deleted: RelPath[];
  skipped: { path: RelPath; reason: SkipReason }[];
}

function reasonOf(error: unknown): SkipReason {
  const code = (error as NodeJS.ErrnoException).code;
  // A directory in the way that still holds files after the restore's own deletions holds only
  // content no snapshot captured (ignored, excluded): it stays, like any excluded path.
  if (code === "ENOTEMPTY") return "excluded";
  return code === "EACCES" || code === "EPERM" || code === "EROFS" ? "permission" : "io";
}

/**
 * Carries out a plan in the work tree. Every write goes to a temp file beside its target and is
 * renamed over it; no write or delete ever goes through a symlinked or non-directory ancestor,
 * so nothing outside the workspace is touched. A path that fails is reported; the rest go on.
 */
export async function applyPlan(
  root: string,
  steps: PlanStep[],
  contentOf: (oid: string) => Buffer,
  /** Part of every temp file name (the restore journal lists it, so a killed run's temp files are found). */
  tempToken: string = randomBytes(5).toString("hex"),
  /** Nested repositories the current state captured by their own rules: written into, their `.git` never. */
  capturedRepos: ReadonlySet<RelPath> = new Set(),
): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { written: [], deleted: [], skipped: [] };
  let writes = 0;
  const emptiedDirs = new Set<RelPath>();
  for (const step of steps) {
    if (step.kind === "skip") {
      outcome.skipped.push({ path: step.path, reason: step.reason });
      continue;
    }
    try {
      // Deletions come first (see planRestore): directories they emptied go before any write
      // (which may create directories again), so a file can take the place of a directory tree.
      if (step.kind === "write" && emptiedDirs.size > 0) await removeEmptyDirs(root, emptiedDirs);
      const way = await ancestorsAreRealDirs(root, step.path, step.kind === "write", capturedRepos);
      if (way !== "ok") {
        outcome.skipped.push({ path: step.path, reason: way === "nested-repo" ? "excluded" : "io" });
        continue;
      }
      if (step.kind === "delete") {
        await deletePath(root, step.path);
        outcome.deleted.push(step.path);
        for (const dir of ancestorsOf(step.path)) emptiedDirs.add(dir);
      } else {
        const tempName = restoreTempName(baseName(step.path), tempToken, writes++);
        await writePath(root, step.path, step.state.mode, contentOf(step.state.oid), tempName);
        outcome.written.push(step.path);
      }
    } catch (error) {
      outcome.skipped.push({ path: step.path, reason: reasonOf(error) });
    }
  }
  await removeEmptyDirs(root, emptiedDirs);
  return outcome;
}

/**
 * Checks each ancestor is a real directory (not a symlink). With `create`, missing ones are made;
 * an ancestor that is an empty directory's worth of nothing but a stale file blocks the path.
 */
async function ancestorsAreRealDirs(
  root: string,
  rel: RelPath,
  create: boolean,
  capturedRepos: ReadonlySet<RelPath>,
): Promise<"ok" | "unsafe" | "nested-repo"> {
  for (const dir of ancestorsOf(rel)) {
    const target = fsPath(root, dir);
    let stat: import("node:fs").Stats | null = null;
    try {
      stat = await fs.lstat(target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (stat?.isDirectory()) {
      // Another repository's work tree (a nested repo or submodule) is never written into,
      // unless it is captured by its own rules (then the safety snapshot holds what changes).
      if (
        !capturedRepos.has(dir) &&
        (await fs.lstat(fsPath(root, `${dir}/.git`)).then(
          () => true,
          () => false,
        ))
      )
        return "nested-repo";
      continue;
    }
    if (stat) return "unsafe"; // a symlink or file where a directory should be
    if (!create) return "ok"; // nothing below a missing directory exists to delete
    await fs.mkdir(target);
  }
  return "ok";
}

async function deletePath(root: string, rel: RelPath): Promise<void> {
  const target = fsPath(root, rel);
  let stat: import("node:fs").Stats;
  try {
    stat = await fs.lstat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (stat.isDirectory()) {
    // A directory appeared where the snapshot had a file: only an empty one may go.
    await fs.rmdir(target);
    return;
  }
  await fs.unlink(target);
}

function baseName(rel: RelPath): RelPath {
  return rel.slice(rel.lastIndexOf("/") + 1);
}

async function writePath(
  root: string,
  rel: RelPath,
  mode: string,
  content: Buffer,
  tempName: RelPath,
): Promise<void> {
  const target = fsPath(root, rel);
  const tempRel = `${parentOf(rel) ? `${parentOf(rel)}/` : ""}${tempName}`;
  const temp = fsPath(root, tempRel);
  try {
    if (mode === MODE.link) {
      await fs.symlink(content, temp);
    } else {
      await fs.writeFile(temp, content, { mode: mode === MODE.exec ? 0o777 : 0o666, flag: "wx" });
      // writeFile's mode applies only on creation and after umask; set the exec bit exactly.
      const stat = await fs.stat(temp);
      const wanted = mode === MODE.exec ? stat.mode | (0o111 & ~process.umask()) : stat.mode & ~0o111;
      if ((stat.mode & 0o777) !== (wanted & 0o777)) await fs.chmod(temp, wanted & 0o777);
    }
    const existing = await fs.lstat(target).catch(() => null);
    if (existing?.isDirectory()) await fs.rmdir(target); // only succeeds when empty
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}

/** Removes directories the restore emptied, deepest first; a non-empty one simply stays. */
async function removeEmptyDirs(root: string, dirs: Set<RelPath>): Promise<void> {
  const ordered = [...dirs].sort((a, b) => b.split("/").length - a.split("/").length);
  for (const dir of ordered) {
    try {
      const stat = await fs.lstat(fsPath(root, dir));
      if (stat.isDirectory()) await fs.rmdir(fsPath(root, dir));
    } catch {
      // not empty, or already gone
    }
    dirs.delete(dir);
  }
}
