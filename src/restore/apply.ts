import { randomHex } from "../util/crypto.js";
import { promises as fs, lchownSync, lstatSync, renameSync, rmdirSync, unlinkSync } from "node:fs";
import { isGitDirectory, looksLikeRepository } from "../capture/nested-check.js";
import { MODE } from "../git/objects.js";
import { restoreTempName } from "../store/restore-journal.js";
import { ancestorsOf, fsPath, parentOf, type RelPath } from "../paths.js";
import { PinnedDirs } from "./pinned-dirs.js";
import { keepOwner, permissionsKept, replacedFile } from "./replaced-file.js";
import type { ExcludedDetail, SkipReason } from "../types.js";
import { MANY_FILES, syncDirs, syncFileSystems } from "../util/durable.js";
import { mapLimit } from "../util/pool.js";
import type { PlanStep } from "./plan.js";

export interface ApplyOutcome {
  written: RelPath[];
  deleted: RelPath[];
  skipped: Skip[];
}

type Skip = { path: RelPath; reason: SkipReason; errno?: string; detail?: ExcludedDetail };

/** A planned skip as reported: its detail only where it has one (reports compare as they were). */
export function plannedSkip(step: Extract<PlanStep, { kind: "skip" }>): Skip {
  const { path, reason, detail, errno } = step;
  return { path, reason, ...(detail ? { detail } : {}), ...(errno ? { errno } : {}) };
}

/** A write whose temp file is on disk, or why it could not be prepared. */
type Prepared = { path: RelPath; temp: RelPath } | { skip: Skip };

function outOfRoomCode(skip: Skip): boolean {
  return skip.errno === "ENOSPC" || skip.errno === "EDQUOT";
}

/** Why `error` left `path` as it was, with the system's code where it had one. */
function skipOf(path: RelPath, error: unknown): Skip {
  const code = (error as NodeJS.ErrnoException).code;
  // A directory in the way that still holds files after the restore's own deletions holds only
  // content no snapshot captured (ignored, excluded): it stays, like any excluded path.
  if (code === "ENOTEMPTY") return { path, reason: "excluded" };
  const reason = code === "EACCES" || code === "EPERM" || code === "EROFS" ? "permission" : "io";
  return typeof code === "string" ? { path, reason, errno: code } : { path, reason };
}

/**
 * Carries out a plan in the work tree. Every write goes to a temp file beside its target and is
 * renamed over it; no write or delete ever goes through a symlinked or non-directory ancestor,
 * not even one another process puts in place while the restore runs (each directory is opened
 * once and written through its handle: see PinnedDirs), so nothing outside the workspace is
 * touched. A path that fails is reported; the rest go on.
 *
 * Crash-consistent (the caller has made the way back durable first): each temp file is on disk
 * before its rename, so after a power cut a file is either old or new, never torn; every directory
 * whose entries changed (renames, deletions, directories made or removed) is flushed once at the end.
 */
export async function applyPlan(
  root: string,
  steps: PlanStep[],
  contentOf: (oid: string) => Buffer,
  /** Part of every temp file name (the restore journal lists it, so a killed run's temp files are found). */
  tempToken: string = randomHex(5),
  /** Nested repositories the current state captured by their own rules: written into, their `.git` never. */
  capturedRepos: ReadonlySet<RelPath> = new Set(),
): Promise<ApplyOutcome> {
  const pins = new PinnedDirs(root);
  try {
    return await applyPinned(root, pins, steps, contentOf, tempToken, capturedRepos);
  } finally {
    pins.close();
  }
}

async function applyPinned(
  root: string,
  pins: PinnedDirs,
  steps: PlanStep[],
  contentOf: (oid: string) => Buffer,
  tempToken: string,
  capturedRepos: ReadonlySet<RelPath>,
): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { written: [], deleted: [], skipped: [] };
  const changedDirs = new Set<RelPath>();
  const ancestors = (path: RelPath, create: boolean) =>
    ancestorsAreRealDirs(root, pins, path, create, changedDirs, capturedRepos);
  const fail = (rel: RelPath, error: unknown) => outcome.skipped.push(skipOf(rel, error));
  // Deletions come first (see planRestore), then the directories they emptied and no write goes
  // into are removed before any write, so a file can take the place of a directory tree.
  const emptiedDirs = new Set<RelPath>();
  for (const step of steps) {
    if (step.kind !== "delete") continue;
    try {
      const found = ancestors(step.path, false);
      if (found === "unsafe" || found === "nested-repo") {
        outcome.skipped.push({ path: step.path, reason: "excluded" });
        continue;
      }
      // A missing directory (removed meanwhile by another process): nothing below it to delete.
      if (found === "ok") deletePath(pins, step.path);
      outcome.deleted.push(step.path);
      changedDirs.add(parentOf(step.path));
      for (const dir of ancestorsOf(step.path)) emptiedDirs.add(dir);
    } catch (error) {
      fail(step.path, error);
    }
  }
  // A directory that holds a write once the restore is done is only emptied for a moment (a turn
  // that renamed the files in it): it stays, with its inode, mode, owner and anyone's cwd in it.
  for (const step of steps) {
    if (step.kind === "write") for (const dir of ancestorsOf(step.path)) emptiedDirs.delete(dir);
  }
  removeEmptyDirs(pins, emptiedDirs, changedDirs);
  // Every temp file is written and flushed first, concurrently (one flush costs milliseconds of
  // waiting on the disk, which overlap), then each is renamed into place in plan order. Many
  // files are flushed by one syncfs of the workspace's file system instead of one fsync each.
  const writes = steps.flatMap((s, n) => (s.kind === "write" ? [{ step: s, n }] : []));
  const flushEach = writes.length <= MANY_FILES;
  const prepareWrite = async ({ step, n }: (typeof writes)[number]): Promise<Prepared> => {
    try {
      // What stands in the way (see skipBlockedWrites; here, one whose deletion failed or made
      // since the plan) is kept: no system error, and nothing a retry would change.
      if (ancestors(step.path, true) !== "ok") return { skip: { path: step.path, reason: "excluded" } };
      const temp = tempPathOf(step.path, restoreTempName(baseName(step.path), tempToken, n));
      const dir = parentOf(step.path);
      pins.hold(dir);
      try {
        const replaced = await replacedFile(pins.path(step.path));
        const kept = permissionsKept(replaced, step.state.mode);
        await writeTemp(pins.path(temp), step.state.mode, contentOf(step.state.oid), flushEach, kept);
        await keepOwner(pins.path(temp), replaced, pins.self(dir));
      } finally {
        pins.release(dir);
      }
      return { path: step.path, temp };
    } catch (error) {
      return { skip: skipOf(step.path, error) };
    }
  };
  const prepared = await mapLimit(writes, 16, prepareWrite);
  // Side by side, a large file's temp can take the last room on a nearly full disk while smaller
  // ones are written, and is then removed: those out of room are tried again one at a time,
  // smallest first, so a restore writes every file that fits.
  const outOfRoom = prepared.flatMap((write, i) => ("skip" in write && outOfRoomCode(write.skip) ? [i] : []));
  if (writes.length > 1) {
    const sizeOf = (i: number) => contentOf(writes[i].step.state.oid).length;
    for (const i of outOfRoom.sort((a, b) => sizeOf(a) - sizeOf(b)))
      prepared[i] = await prepareWrite(writes[i]);
  }
  if (!flushEach) await syncFileSystems([root]);
  for (const write of prepared) {
    if ("skip" in write) {
      outcome.skipped.push(write.skip);
      continue;
    }
    // Open still, unless many directories made it close the handle: then opened and checked again.
    if (pins.open(parentOf(write.path), false) !== "ok") {
      outcome.skipped.push({ path: write.path, reason: "excluded" });
      continue;
    }
    try {
      renameIntoPlace(pins, write.temp, write.path);
      outcome.written.push(write.path);
      changedDirs.add(parentOf(write.path));
    } catch (error) {
      try {
        unlinkSync(pins.path(write.temp));
      } catch {
        // already gone
      }
      fail(write.path, error);
    }
  }
  for (const step of steps) if (step.kind === "skip") outcome.skipped.push(plannedSkip(step));
  if (changedDirs.size > MANY_FILES) await syncFileSystems([root]);
  else await syncDirs([...changedDirs].map((dir) => fsPath(root, dir)));
  return outcome;
}

/**
 * Checks each ancestor is a real directory (not a symlink) and opens it (see PinnedDirs). With
 * `create`, missing ones are made; an ancestor that is a file or symlink blocks the path.
 * Synchronous calls: a restore makes several per path (the 10k bench's 20 paths made 120), each a
 * tiny one whose thread-pool round trip cost more than the call.
 */
function ancestorsAreRealDirs(
  root: string,
  pins: PinnedDirs,
  rel: RelPath,
  create: boolean,
  changedDirs: Set<RelPath>,
  capturedRepos: ReadonlySet<RelPath>,
): "ok" | "missing" | "unsafe" | "nested-repo" {
  const made = (dir: RelPath) => {
    changedDirs.add(parentOf(dir));
    ownAsParent(pins.path(dir), pins.self(parentOf(dir)));
  };
  for (const dir of ancestorsOf(rel)) {
    const opened = pins.open(dir, create, made);
    if (opened === "unsafe") return "unsafe"; // a symlink or file where a directory should be
    if (opened === "missing") return "missing"; // only without `create`: nothing below it exists
    // Another repository's work tree (a nested repo or submodule) is never written into, unless
    // it is captured by its own rules (then the safety snapshot holds what changes). A `.git`
    // that git would not take for a repository (an empty fixture directory, a stray file) makes
    // none: capture looked inside, so restore writes there too.
    if (!capturedRepos.has(dir) && looksLikeRepository(root, dir)) return "nested-repo";
    if (isGitDirectory(root, dir)) return "nested-repo"; // a bare repository: git's own data
  }
  return "ok";
}

function deletePath(pins: PinnedDirs, rel: RelPath): void {
  const target = pins.path(rel);
  const stat = lstatSync(target, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isDirectory()) {
    // A directory appeared where the snapshot had a file: only an empty one may go.
    rmdirSync(target);
    pins.forget(rel);
    return;
  }
  unlinkSync(target);
}

function baseName(rel: RelPath): RelPath {
  return rel.slice(rel.lastIndexOf("/") + 1);
}

function tempPathOf(rel: RelPath, tempName: RelPath): RelPath {
  return `${parentOf(rel) ? `${parentOf(rel)}/` : ""}${tempName}`;
}

/** Writes a temp file with the wanted content and mode (`permissions`, if given), flushed with `flush`. */
async function writeTemp(
  temp: Buffer,
  mode: string,
  content: Buffer,
  flush: boolean,
  permissions: number | null,
): Promise<void> {
  if (mode === MODE.link) {
    await fs.symlink(content, temp);
    return;
  }
  try {
    const handle = await fs.open(temp, "wx", mode === MODE.exec ? 0o777 : 0o666);
    try {
      await handle.writeFile(content);
      // The mode given to open applies after umask; set the exec bit exactly.
      const stat = await handle.stat();
      const wanted =
        permissions ?? (mode === MODE.exec ? stat.mode | (0o111 & ~process.umask()) : stat.mode & ~0o111);
      if ((stat.mode & 0o777) !== (wanted & 0o777)) await handle.chmod(wanted & 0o777);
      if (flush) await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}

/** A directory a restore run as root made in another user's tree is that user's, as its parent. */
function ownAsParent(made: Buffer, parent: Buffer): void {
  if (process.getuid?.() !== 0) return;
  const owner = lstatSync(parent, { throwIfNoEntry: false });
  if (owner && (owner.uid !== 0 || owner.gid !== 0)) lchownSync(made, owner.uid, owner.gid);
}

/** Synchronous, as the checks and removals around it: one tiny call each, made in plan order. */
function renameIntoPlace(pins: PinnedDirs, temp: RelPath, rel: RelPath): void {
  const target = pins.path(rel);
  let existing: import("node:fs").Stats | undefined;
  try {
    existing = lstatSync(target, { throwIfNoEntry: false });
  } catch {
    // unreadable: the rename says what is wrong
  }
  if (existing?.isDirectory()) {
    rmdirSync(target); // only succeeds when empty
    pins.forget(rel);
  }
  renameSync(pins.path(temp), target);
}

/** Removes directories the restore emptied, deepest first; a non-empty one simply stays. */
function removeEmptyDirs(pins: PinnedDirs, dirs: Set<RelPath>, changedDirs: Set<RelPath>): void {
  const ordered = [...dirs].sort((a, b) => b.split("/").length - a.split("/").length);
  for (const dir of ordered) {
    try {
      if (pins.open(parentOf(dir), false) === "ok" && lstatSync(pins.path(dir)).isDirectory()) {
        rmdirSync(pins.path(dir));
        pins.forget(dir);
        changedDirs.add(parentOf(dir));
      }
    } catch {
      // not empty, or already gone
    }
    dirs.delete(dir);
  }
}
