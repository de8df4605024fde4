import { realpathSync } from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { parseStatusV2, type StatusEntry } from "../git/status.js";
import { ancestorsOf, climbsOut, isWithin, type RelPath, relFromText } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";
import { isRestoreTemp } from "../store/restore-journal.js";
import type { IgnoreRules } from "./ghostignore.js";

/**
 * What to capture of the untracked files git listed: pure decisions, tested without a disk.
 * Structural exclusions (nested repositories, dependency dirs, .ghostignore, large directories)
 * are decided here; size and readability need lstat and are decided by the caller.
 */
export interface UntrackedPolicyInput {
  /** Untracked paths as git listed them; a nested repository shows as "dir/". */
  untracked: RelPath[];
  dependencyDirs: ReadonlySet<string>;
  /** null: large-dir does not apply (plain directories). */
  largeDirFiles: number | null;
  ghostignore: IgnoreRules | null;
  /** Directories that hold tracked files, so they are not "untracked directories". */
  isTrackedDir: (dir: RelPath) => boolean;
  /** Untracked files already counted per outermost dependency directory (not in `untracked`). */
  dependencyDirFiles?: ReadonlyMap<RelPath, number>;
  /** ghostcommit's data directory, where it lies inside the workspace (`dataDirWithin`). */
  dataDir?: RelPath | null;
}

/**
 * ghostcommit's data directory (`GHOSTCOMMIT_HOME`), as a path of the workspace at `root` when it
 * lies inside it (an agent started in ~, a store set inside a project): its stores are never a
 * workspace's files. Captured, a restore of an older snapshot deleted the store's newer objects
 * and refs, its own safety snapshot's among them.
 */
export function dataDirWithin(root: string): RelPath | null {
  let data: string;
  try {
    data = realpathSync(dataHome());
  } catch {
    return null; // not made yet: nothing of it to capture
  }
  const rel = path.relative(root, data);
  if (rel === "" || climbsOut(rel)) return null;
  return relFromText(rel.split(path.sep).join("/"));
}

export interface UntrackedPolicyResult {
  capture: RelPath[];
  excluded: StoredExclusion[];
}

/** The outermost ancestor directory named like a dependency dir, or null. */
export function dependencyDirOf(rel: RelPath, names: ReadonlySet<string>): RelPath | null {
  // Thousands of untracked paths (a node_modules) pass here, in sorted order: a path inside the
  // last match has the same outermost match (the components before it are the same), so the
  // regular expression runs about once per dependency directory.
  const matcher = dependencyMatcher(names);
  if (matcher.last !== null && rel.startsWith(matcher.last) && rel.charCodeAt(matcher.last.length) === 0x2f)
    return matcher.last;
  const match = matcher.pattern.exec(rel);
  if (!match) return null;
  matcher.last = rel.slice(0, match.index + match[0].length - 1);
  return matcher.last;
}

interface DependencyMatcher {
  /** Matches the first path component (followed by more path) that is one of the names. */
  pattern: RegExp;
  last: RelPath | null;
}

const matchers = new WeakMap<ReadonlySet<string>, DependencyMatcher>();

function dependencyMatcher(names: ReadonlySet<string>): DependencyMatcher {
  let matcher = matchers.get(names);
  if (!matcher) {
    const alternatives = [...names].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    matcher = { pattern: new RegExp(`^(?:[^/]*/)*?(?:${alternatives || "(?!)"})/`), last: null };
    matchers.set(names, matcher);
  }
  return matcher;
}

/** The outermost ancestor directory matched by .ghostignore, else the path itself if matched, else null. */
export function ghostignoreMatch(rel: RelPath, ignore: IgnoreRules | null): RelPath | null {
  if (!ignore) return null;
  for (const dir of ancestorsOf(rel)) {
    if (safeIgnores(ignore, `${dir}/`)) return dir;
  }
  return safeIgnores(ignore, rel) ? rel : null;
}

function safeIgnores(ignore: IgnoreRules, rel: string): boolean {
  try {
    return ignore.ignores(rel);
  } catch {
    return false; // a name the matcher cannot express (e.g. with odd bytes) is simply not matched
  }
}

/** Directories with more than `limit` untracked files below them (recursively), outermost first. */
export function largeDirCandidates(files: RelPath[], limit: number): RelPath[] {
  const counts = new Map<RelPath, number>();
  for (const file of files) {
    for (const dir of ancestorsOf(file)) counts.set(dir, (counts.get(dir) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, n]) => n > limit)
    .map(([dir]) => dir)
    .sort((a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : 1));
}

export function classifyUntracked(input: UntrackedPolicyInput): UntrackedPolicyResult {
  const excluded = new Map<RelPath, StoredExclusion>();
  for (const [path, files] of input.dependencyDirFiles ?? []) {
    excluded.set(path, { path, reason: "dependency-dir", files });
  }
  const count = (path: RelPath, reason: StoredExclusion["reason"]) => {
    const entry = excluded.get(path) ?? { path, reason, files: 0 };
    entry.files = (entry.files ?? 0) + 1;
    excluded.set(path, entry);
  };
  const remaining: RelPath[] = [];
  const dataDir = input.dataDir ?? null;
  for (const raw of input.untracked) {
    if (dataDir !== null && isWithin(raw.endsWith("/") ? raw.slice(0, -1) : raw, dataDir)) {
      count(dataDir, "store");
      continue;
    }
    if (raw.endsWith("/")) {
      const dir = raw.slice(0, -1);
      const depDir = dependencyDirOf(`${dir}/x`, input.dependencyDirs);
      const ignored = ghostignoreMatch(dir, input.ghostignore);
      if (depDir) count(depDir, "dependency-dir");
      else if (ignored) count(ignored, "ignore-file");
      else excluded.set(dir, { path: dir, reason: "nested-repo" });
      continue;
    }
    if (isRestoreTemp(raw)) continue; // a live restore's temp file: that restore removes it
    const depDir = dependencyDirOf(raw, input.dependencyDirs);
    if (depDir) {
      count(depDir, "dependency-dir");
      continue;
    }
    const ignored = ghostignoreMatch(raw, input.ghostignore);
    if (ignored) {
      if (ignored === raw) excluded.set(raw, { path: raw, reason: "ignore-file" });
      else count(ignored, "ignore-file");
      continue;
    }
    remaining.push(raw);
  }
  let capture = remaining;
  if (input.largeDirFiles !== null) {
    const large: RelPath[] = [];
    for (const dir of largeDirCandidates(remaining, input.largeDirFiles)) {
      if (large.some((outer) => dir.startsWith(`${outer}/`))) continue;
      if (input.isTrackedDir(dir)) continue;
      large.push(dir);
    }
    if (large.length > 0) {
      capture = [];
      for (const file of remaining) {
        const outer = large.find((dir) => file.startsWith(`${dir}/`));
        if (outer) count(outer, "large-dir");
        else capture.push(file);
      }
    }
  }
  return { capture, excluded: [...excluded.values()] };
}

/**
 * Status's entries, with the untracked files inside dependency directories taken out and counted
 * per outermost such directory. Only where that directory lies inside the workspace (`prefix`):
 * there it is also the outermost one of the workspace-relative path, which the policy would find.
 * Status lists untracked files in path order, so the files of one directory come together: each
 * is recognized by the directory before it, without a string of its own (a `node_modules` that
 * no `.gitignore` names lists thousands).
 */
export function parseSettingAside(
  stdout: Buffer,
  dependencyDirs: ReadonlySet<string>,
  prefix: RelPath,
): { entries: StatusEntry[]; dependencyDirFiles: Map<RelPath, number> } {
  const dependencyDirFiles = new Map<RelPath, number>();
  let last: RelPath | null = null;
  let lastCount = 0;
  const aside = (text: string, start: number, end: number): boolean => {
    if (
      last !== null &&
      end > start + last.length + 1 &&
      text.charCodeAt(start + last.length) === SLASH &&
      text.startsWith(last, start)
    ) {
      lastCount++;
      return true;
    }
    const dir = dependencyDirOf(text.slice(start, end), dependencyDirs);
    if (dir === null || !isWithin(dir, prefix) || dir === prefix) return false;
    if (last !== null) dependencyDirFiles.set(last, lastCount);
    last = dir;
    lastCount = (dependencyDirFiles.get(dir) ?? 0) + 1;
    return true;
  };
  const entries = parseStatusV2(stdout, aside);
  if (last !== null) dependencyDirFiles.set(last, lastCount);
  return { entries, dependencyDirFiles };
}

const SLASH = 0x2f;

/** Exclusions one per path and reason, in path order. */
export function sortExclusions(list: StoredExclusion[]): StoredExclusion[] {
  const seen = new Map<string, StoredExclusion>();
  for (const entry of list) seen.set(`${entry.reason}\0${entry.path}`, entry);
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Less the directory exclusions an include took back whole (`--include build` captures the
 * dependency directory `build/`), and less, in a directory's file count, the files included one
 * by one and captured (`captured`: `--include dist/chunk-1.js`, a touched file, a rewind's safety
 * snapshot), a directory none of whose counted files is left keeping no count: what a snapshot
 * reports as left out, it left out.
 */
export function withoutIncludedDirs(
  excluded: StoredExclusion[],
  includes: readonly RelPath[],
  captured: Iterable<RelPath> = [],
): StoredExclusion[] {
  const isDir = (e: StoredExclusion) => e.reason === "dependency-dir" || e.reason === "large-dir";
  const whole = (e: StoredExclusion) => isDir(e) && includes.some((inc) => isWithin(e.path, inc));
  const files = [...captured];
  return excluded.flatMap((e) => {
    if (whole(e)) return [];
    if (!isDir(e) || e.files === undefined) return [e];
    const left = e.files - files.filter((f) => isWithin(f, e.path) && f !== e.path).length;
    // None left: still listed (without a count), as a restore must not take a file made there
    // later for one this snapshot proves absent.
    return left > 0 ? [{ ...e, files: left }] : [{ path: e.path, reason: e.reason }];
  });
}
