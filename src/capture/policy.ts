import type { Ignore } from "ignore";
import { ancestorsOf, type RelPath } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";

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
  ghostignore: Ignore | null;
  /** Directories that hold tracked files, so they are not "untracked directories". */
  isTrackedDir: (dir: RelPath) => boolean;
}

export interface UntrackedPolicyResult {
  capture: RelPath[];
  excluded: StoredExclusion[];
}

/** The outermost ancestor directory named like a dependency dir, or null. */
export function dependencyDirOf(rel: RelPath, names: ReadonlySet<string>): RelPath | null {
  // One regular expression per name set: thousands of untracked paths (a node_modules) pass here.
  const match = dependencyPattern(names).exec(rel);
  return match ? rel.slice(0, match.index + match[0].length - 1) : null;
}

const patterns = new WeakMap<ReadonlySet<string>, RegExp>();

/** Matches the first path component (followed by more path) that is one of the names. */
function dependencyPattern(names: ReadonlySet<string>): RegExp {
  let pattern = patterns.get(names);
  if (!pattern) {
    const alternatives = [...names].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    pattern = new RegExp(`^(?:[^/]*/)*?(?:${alternatives || "(?!)"})/`);
    patterns.set(names, pattern);
  }
  return pattern;
}

/** The outermost ancestor directory matched by .ghostignore, else the path itself if matched, else null. */
export function ghostignoreMatch(rel: RelPath, ignore: Ignore | null): RelPath | null {
  if (!ignore) return null;
  for (const dir of ancestorsOf(rel)) {
    if (safeIgnores(ignore, `${dir}/`)) return dir;
  }
  return safeIgnores(ignore, rel) ? rel : null;
}

function safeIgnores(ignore: Ignore, rel: string): boolean {
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
  const count = (path: RelPath, reason: StoredExclusion["reason"]) => {
    const entry = excluded.get(path) ?? { path, reason, files: 0 };
    entry.files = (entry.files ?? 0) + 1;
    excluded.set(path, entry);
  };
  const remaining: RelPath[] = [];
  for (const raw of input.untracked) {
    if (raw.endsWith("/")) {
      const dir = raw.slice(0, -1);
      const depDir = dependencyDirOf(`${dir}/x`, input.dependencyDirs);
      const ignored = ghostignoreMatch(dir, input.ghostignore);
      if (depDir) count(depDir, "dependency-dir");
      else if (ignored) count(ignored, "ignore-file");
      else excluded.set(dir, { path: dir, reason: "nested-repo" });
      continue;
    }
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
