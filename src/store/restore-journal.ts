import { randomHex } from "../util/crypto.js";
import { promises as fs, lstatSync } from "node:fs";
import path from "node:path";
import { ancestorsOf, fsPath, parentOf, type RelPath } from "../paths.js";
import { isPlainObject, readJson, STORE_FILES, type StorePaths, writeFileAtomic } from "./layout.js";
import { alive } from "../util/process.js";
import { namesIn } from "../util/small-files.js";
import { deadCaptureTemps } from "../git/loose-objects.js";

/**
 * Leftovers of processes that died (kill -9, power loss): restore temp files in the workspace,
 * temporary git dirs, half-written state files. Each carries its owner's pid in its name or
 * content, so only those of dead processes are touched; a live process's work is never disturbed.
 */

/** The journal a restore keeps while it changes files: what to clean if it dies half-way. */
export interface RestoreJournal {
  pid: number;
  safety: string | null;
  startedAt: string;
  /** Part of every temp file name this restore creates (`.<name>.gc-<token>-<n>~`). */
  token: string;
  /** Directories (workspace-relative RelPaths) where it may have left temp files. */
  dirs: RelPath[];
  /**
   * Directories it may make (none was a directory when it began): once its temp files are gone,
   * those left empty are removed, so undoing a restore killed before filling them leaves none.
   */
  made?: RelPath[];
  /** How to finish or undo it (a rewind or redo names its session's commands). */
  hint?: string;
  /** The hint is a redo's (else a rewind's). */
  redo?: true;
}

/** A restore that died half-way, kept (after its temp files were removed) until `doctor --repair`. */
export interface InterruptedRestore {
  pid: number;
  safety: string | null;
  startedAt: string;
  journal: string;
  hint?: string;
  redo?: true;
}

/**
 * The directories a plan's writes put temp files in (each write's parent), and those of them and
 * their ancestors that are not directories yet (the restore makes them). Recorded before the
 * first change, so a restore killed right after a mkdir still names the directory it made. One
 * lstat per directory, none below one found missing.
 */
export function journalDirs(
  root: string,
  steps: readonly { kind: string; path: RelPath }[],
): { dirs: RelPath[]; made: RelPath[] } {
  const dirs = [...new Set(steps.flatMap((s) => (s.kind === "write" ? [parentOf(s.path)] : [])))].sort();
  const made = new Set<RelPath>();
  const present = new Set<RelPath>();
  for (const dir of dirs) {
    if (dir === "") continue;
    for (const each of [...ancestorsOf(dir), dir]) {
      if (made.has(each) || present.has(each)) continue;
      if (made.has(parentOf(each)) || !isDirectory(fsPath(root, each))) made.add(each);
      else present.add(each);
    }
  }
  return { dirs, made: [...made].sort() };
}

function isDirectory(full: Buffer): boolean {
  try {
    return lstatSync(full, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false; // below a file, or unreadable: not a directory it can use as it is
  }
}

export function journalFile(paths: StorePaths, pid = process.pid): string {
  return path.join(paths.tmpDir, `restore-${pid}.json`);
}

/** The journals of restores whose process died before anything settled them (a kill -9). */
export async function deadRestoreJournals(paths: StorePaths): Promise<string[]> {
  const names = await fs.readdir(paths.tmpDir).catch(() => [] as string[]);
  return names.flatMap((name) => {
    const match = /^restore-(\d+)\.json$/.exec(name);
    return match && !alive(Number(match[1])) ? [path.join(paths.tmpDir, name)] : [];
  });
}

export function interruptedDir(paths: StorePaths): string {
  return path.join(paths.dir, "interrupted");
}

/** The temp file name a restore writes beside `name` before renaming it into place. */
export function restoreTempName(name: RelPath, token: string, n: number): RelPath {
  return `.${name.slice(0, 100)}.gc-${token}-${n}~`;
}

/**
 * A restore's temp file (see `restoreTempName`), named by its path: never captured, so a snapshot
 * taken while another process restores cannot hold one (a dead process's are removed first).
 */
export function isRestoreTemp(rel: RelPath): boolean {
  return /(^|\/)\.[^/]*\.gc-[0-9a-f]{10}-\d+~$/s.test(rel);
}

function isJournal(value: unknown): boolean {
  const v = value as RestoreJournal;
  return (
    isPlainObject(value) &&
    typeof v.token === "string" &&
    /^[0-9a-f]{8,}$/.test(v.token) &&
    Array.isArray(v.dirs) &&
    v.dirs.every((d) => typeof d === "string") &&
    (v.made === undefined || (Array.isArray(v.made) && v.made.every((d) => typeof d === "string")))
  );
}

/** What one cleanup pass found and did. */
export interface LeftoverReport {
  /** Journals of restores that died, now recorded under `interrupted/`. */
  interrupted: InterruptedRestore[];
  /** Files and directories removed (absolute paths, for `doctor --repair`'s report). */
  removed: string[];
}

/**
 * A go-ahead for a worker waiting for a command's end (see `WorkerAfterCommand`): its shell takes
 * it within a second, so one a minute old had no shell left to take it.
 */
const GO_AHEAD = new RegExp(`^(${STORE_FILES.pushGo}|${STORE_FILES.gcGo})-[0-9a-f]+$`);

/**
 * Removes what dead processes left behind. Runs at the start of every capture, so a restore's
 * temp files never end up in the next snapshot, and by `doctor --repair`. Cheap: four readdirs
 * when there is nothing to do.
 */
export async function cleanLeftovers(
  paths: StorePaths,
  root: string,
  objectsDir = paths.objectsDir,
): Promise<LeftoverReport> {
  const report: LeftoverReport = { interrupted: [], removed: [] };
  // A capture killed while writing its pack leaves it, as large as what it captured.
  for (const temp of deadCaptureTemps(objectsDir)) await remove(temp, report);
  for (const name of namesIn(paths.tmpDir)) {
    const full = path.join(paths.tmpDir, name);
    const journal = /^restore-(\d+)\.json$/.exec(name);
    if (journal) {
      if (alive(Number(journal[1]))) continue;
      const record = await settleJournal(paths, root, full, report);
      if (record) report.interrupted.push(record);
      continue;
    }
    const owner = /^gitdir-(\d+)-|\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
    if (owner && !alive(Number(owner[1] ?? owner[2]))) await remove(full, report);
  }
  for (const name of namesIn(paths.dir)) {
    const owner = /^git\.init-(\d+)-|\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
    if (owner && !alive(Number(owner[1] ?? owner[2]))) await remove(path.join(paths.dir, name), report);
    else if (/\.ghostlock\.(stale|new)-[0-9a-f]+$/.test(name) || GO_AHEAD.test(name))
      await removeIfOld(path.join(paths.dir, name), report);
  }
  return report;
}

async function remove(full: string, report: LeftoverReport): Promise<void> {
  await fs.rm(full, { recursive: true, force: true });
  report.removed.push(full);
}

async function removeIfOld(full: string, report: LeftoverReport, ageMs = 60_000): Promise<void> {
  const stat = await fs.lstat(full).catch(() => null);
  if (stat && Date.now() - stat.mtimeMs > ageMs) await remove(full, report);
}

/**
 * Removes the temp files of a dead restore (never following a symlink: each listed directory
 * must still be a real directory below the workspace root), then the directories it made that
 * are left empty, and moves its journal to `interrupted/`, where `doctor` reports it.
 */
async function settleJournal(
  paths: StorePaths,
  root: string,
  file: string,
  report: LeftoverReport,
): Promise<InterruptedRestore | null> {
  const journal = await readJson<RestoreJournal | null>(file, null, isJournal);
  const raw = await readJson<Partial<RestoreJournal>>(file, {});
  if (journal) {
    const pattern = new RegExp(`^\\..*\\.gc-${journal.token}-\\d+~$`, "s");
    for (const dir of journal.dirs) {
      if (!(await isRealDirBelow(root, dir))) continue;
      const entries = await fs.readdir(fsPath(root, dir), { encoding: "buffer" }).catch(() => [] as Buffer[]);
      for (const entry of entries) {
        const name = entry.toString("latin1");
        if (!pattern.test(name)) continue;
        const full = fsPath(root, dir === "" ? name : `${dir}/${name}`);
        const stat = await fs.lstat(full).catch(() => null);
        if (!stat || stat.isDirectory()) continue;
        await fs.unlink(full).catch(() => {});
        report.removed.push(full.toString("utf8"));
      }
    }
    // Deepest first, so a parent it made is empty once its children are gone; rmdir removes
    // only an empty directory, so one holding anything (a restored file, the user's) stays.
    const made = [...(journal.made ?? [])].sort((a, b) => b.split("/").length - a.split("/").length);
    for (const dir of made) {
      if (dir === "" || !(await isRealDirBelow(root, dir))) continue;
      const removed = await fs.rmdir(fsPath(root, dir)).then(
        () => true,
        () => false,
      );
      if (removed) report.removed.push(fsPath(root, dir).toString("utf8"));
    }
  }
  const record: InterruptedRestore = {
    pid: typeof raw.pid === "number" ? raw.pid : 0,
    safety: typeof raw.safety === "string" ? raw.safety : null,
    startedAt: typeof raw.startedAt === "string" ? raw.startedAt : "",
    journal: path.basename(file),
    ...(typeof raw.hint === "string" ? { hint: raw.hint } : {}),
    ...(raw.redo === true ? { redo: true } : {}),
  };
  const target = path.join(interruptedDir(paths), `restore-${record.pid}-${randomHex(4)}.json`);
  try {
    await fs.mkdir(interruptedDir(paths), { recursive: true, mode: 0o700 });
    await writeFileAtomic(target, JSON.stringify(record));
    await fs.rm(file); // another process may have settled it at the same time
  } catch {
    await fs.rm(target, { force: true });
    return null;
  }
  return record;
}

/** True when every component of `dir` below root is a real directory (no symlink on the way). */
async function isRealDirBelow(root: string, dir: RelPath): Promise<boolean> {
  if (dir.split("/").some((part) => part === ".." || part === "." || part === "")) return dir === "";
  let current = "";
  for (const part of dir.split("/")) {
    current = current === "" ? part : `${current}/${part}`;
    const stat = await fs.lstat(fsPath(root, current)).catch(() => null);
    if (!stat?.isDirectory()) return false;
  }
  return true;
}

/** Restores that died half-way and were not yet acknowledged by `doctor --repair`. */
export async function interruptedRestores(
  paths: StorePaths,
): Promise<(InterruptedRestore & { file: string })[]> {
  const out: (InterruptedRestore & { file: string })[] = [];
  const dir = interruptedDir(paths);
  for (const name of (await fs.readdir(dir).catch(() => [] as string[])).sort()) {
    if (!name.endsWith(".json")) continue;
    const file = path.join(dir, name);
    const record = await readJson<Partial<InterruptedRestore>>(file, {});
    out.push({
      pid: typeof record.pid === "number" ? record.pid : 0,
      safety: typeof record.safety === "string" ? record.safety : null,
      startedAt: typeof record.startedAt === "string" ? record.startedAt : "",
      journal: typeof record.journal === "string" ? record.journal : name,
      ...(typeof record.hint === "string" ? { hint: record.hint } : {}),
      ...(record.redo === true ? { redo: true } : {}),
      file,
    });
  }
  return out;
}

/**
 * A restore that ran to its end sets the files to the state its user chose: the restores
 * interrupted before it started are then past, and `doctor` stops naming their way back (their
 * safety snapshots stay listed). Returns how many were settled.
 */
export async function settleEarlierInterrupted(paths: StorePaths, startedAt: string): Promise<number> {
  let settled = 0;
  for (const record of await interruptedRestores(paths)) {
    const started = Date.parse(record.startedAt); // unknown: it was there before this one began
    if (Number.isFinite(started) && started >= Date.parse(startedAt)) continue;
    await fs.rm(record.file, { force: true });
    settled++;
  }
  return settled;
}
