import { walkIndexFile } from "../git/index-walk.js";
import { ancestorsOf, type RelPath } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";

/** A file a plain directory's snapshot would add, as the budget weighs it. */
export interface Candidate {
  path: RelPath;
  size: number;
  mtimeMs: number;
  forced: boolean;
  /** In the last snapshot already (edited since, or not): it keeps its place before new files. */
  captured: boolean;
}

/**
 * Keeps a plain directory within its budget: touched files always, then those already captured,
 * then the most recently modified, so a home directory snapshot finishes and says what it left
 * out. A file once captured is not thrown out for a newer one: it would vanish from the next
 * snapshot although nobody removed it, and a rewind would take that for a change.
 */
export function applyBudget(
  candidates: Candidate[],
  before: { files: number; bytes: number },
  maxFiles: number,
  maxBytes: number,
): { add: Candidate[]; dropped: Candidate[] } {
  if (before.files + candidates.length <= maxFiles && before.bytes + sum(candidates) <= maxBytes) {
    return { add: candidates, dropped: [] };
  }
  const ordered = [...candidates].sort(
    (a, b) =>
      Number(b.forced) - Number(a.forced) || Number(b.captured) - Number(a.captured) || b.mtimeMs - a.mtimeMs,
  );
  const add: Candidate[] = [];
  const dropped: Candidate[] = [];
  let files = before.files;
  let bytes = before.bytes;
  for (const candidate of ordered) {
    if (candidate.forced || (files + 1 <= maxFiles && bytes + candidate.size <= maxBytes)) {
      add.push(candidate);
      files++;
      bytes += candidate.size;
    } else {
      dropped.push(candidate);
    }
  }
  return { add, dropped };
}

/**
 * Bytes of the regular files the store's index holds (`count` entries), less those of `leaving`
 * (files this run removes or reads again, whose new sizes count as candidates): one walk of the
 * index, some tens of milliseconds for 50,000 entries, asked only near the budget. The sizes are
 * git's stat sizes, modulo 2^32 (a file past 4 GiB is past any sensible size limit); symlinks are
 * left out. Null when the index cannot be read.
 */
export function indexedBytes(indexFile: string, count: number, leaving: ReadonlySet<RelPath>): number | null {
  const every = leaving.size > 0 ? new Set(Array.from({ length: count }, (_, i) => i)) : undefined;
  const walk = walkIndexFile(indexFile, { files: true, namesAt: every });
  if (!walk?.files) return null;
  const { count: files, statSizes, positions } = walk.files;
  let bytes = 0;
  for (let i = 0; i < files; i++) if (!every || !leaving.has(walk.names[positions[i]])) bytes += statSizes[i];
  return bytes;
}

/**
 * Reports files left out by the budget as few entries as possible: the outermost directory holding
 * nothing but left-out files, else the file itself. A home directory's 150,000 cache files become
 * one line, and a restore's deletion proof checks a handful of entries instead of every file.
 */
export function groupBudgetExclusions(dropped: Candidate[], staying: RelPath[]): StoredExclusion[] {
  const holdsCaptured = new Set<RelPath>([""]);
  for (const rel of staying) for (const dir of ancestorsOf(rel)) holdsCaptured.add(dir);
  const groups = new Map<RelPath, StoredExclusion>();
  for (const candidate of dropped) {
    const outer = ancestorsOf(candidate.path).find((dir) => !holdsCaptured.has(dir)) ?? candidate.path;
    const group = groups.get(outer) ?? { path: outer, reason: "budget", bytes: 0, files: 0 };
    group.bytes = (group.bytes ?? 0) + candidate.size;
    group.files = (group.files ?? 0) + 1;
    groups.set(outer, group);
  }
  return [...groups.values()];
}

function sum(candidates: Candidate[]): number {
  return candidates.reduce((total, c) => total + c.size, 0);
}
