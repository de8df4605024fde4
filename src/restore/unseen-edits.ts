import { promises as fs } from "node:fs";
import { hasUnsafeAncestor } from "../capture/read-worktree.js";
import { MODE, objectId } from "../git/objects.js";
import { fsPath, isWithin, type RelPath, relFromBytes } from "../paths.js";
import { fromTop, lsFiles } from "./excluded-now.js";
import type { PathChange, PlanStep } from "./plan.js";
import type { ExcludedDetail } from "../types.js";

/** Paths the restore would write that exist on disk although the safety snapshot does not hold them. */
export async function presentUncapturedOf(
  root: string,
  changes: PathChange[],
  unreadableNow: ReadonlySet<RelPath>,
): Promise<Map<RelPath, ExcludedDetail | null>> {
  const present = new Map<RelPath, ExcludedDetail | null>();
  const unread = [...unreadableNow];
  for (const change of changes) {
    if (change.current === null && change.target !== null) {
      // A directory in the way is not content of its own: the write replaces it only once it is
      // empty (its captured files are deleted first; anything uncaptured left in it blocks the write).
      // A path below a symlink is not in the workspace (lstat would follow the link outside).
      if (hasUnsafeAncestor(root, change.path)) continue;
      // A file the capture could not stat, or one in a directory it could not list (git names
      // either, as its untracked cache has it): what is there is unknown.
      if (unread.some((p) => isWithin(change.path, p))) {
        present.set(change.path, "unreadable");
        continue;
      }
      const stat = await fs.lstat(fsPath(root, change.path)).catch(() => null);
      // Said why, where it is known: a file the capture could not read, a directory of files no
      // snapshot holds (ignored ones) standing where the file goes.
      if (stat && !stat.isDirectory())
        present.set(change.path, unreadableNow.has(change.path) ? "unreadable" : null);
      else if (stat && (await dirHoldsUncaptured(root, change.path, changes)))
        present.set(change.path, "in-the-way");
    }
  }
  return present;
}

/**
 * Whether a directory standing where a file is to be written holds content the safety snapshot
 * lacks: it is not empty and no captured file below it is being deleted (so it is all ignored or
 * excluded content). Such a directory is left alone; an empty one is simply replaced.
 */
async function dirHoldsUncaptured(root: string, dir: RelPath, changes: PathChange[]): Promise<boolean> {
  if (changes.some((c) => c.current !== null && c.path.startsWith(`${dir}/`))) return false;
  const entries = await fs.readdir(fsPath(root, dir)).catch(() => [] as string[]);
  return entries.length > 0;
}

/** Past this many files, only those git cannot see are read (one `ls-files` finds them). */
const READ_ALL_UP_TO = 256;

/**
 * Restore steps that would overwrite or delete content the safety snapshot does not hold, turned
 * into skips (`excluded`). A file marked `--skip-worktree` or `--assume-unchanged` is invisible to
 * `git status`, so the capture takes its committed content while the disk holds the user's local
 * edit: overwriting it could never be undone. The same holds for a file edited after the capture.
 * Captured content is byte-exact, so a file whose bytes do not hash to its captured id is such a one.
 */
export async function skipUnseenEdits(
  root: string,
  worktreeRoot: string | null,
  prefix: RelPath,
  steps: PlanStep[],
  changes: PathChange[],
): Promise<PlanStep[]> {
  const captured = new Map(changes.map((c) => [c.path, c.current]));
  const touched = steps.filter((s) => {
    const mode = captured.get(s.path)?.mode;
    return s.kind !== "skip" && (mode === MODE.file || mode === MODE.exec);
  });
  if (touched.length === 0) return steps;
  const suspects =
    touched.length <= READ_ALL_UP_TO || worktreeRoot === null
      ? touched.map((s) => s.path)
      : await hiddenFromStatus(
          worktreeRoot,
          prefix,
          touched.map((s) => s.path),
        );
  const unseen = new Set<RelPath>();
  for (const path of suspects) {
    if (hasUnsafeAncestor(root, path)) continue;
    const content = await fs.readFile(fsPath(root, path)).catch(() => null); // gone or not a file: nothing to lose
    if (content !== null && objectId("blob", content) !== captured.get(path)?.oid) unseen.add(path);
  }
  if (unseen.size === 0) return steps;
  return steps.map((s) =>
    unseen.has(s.path) ? { kind: "skip", path: s.path, reason: "excluded", detail: "local-edit" } : s,
  );
}

/** Which of `paths` the index marks skip-worktree or assume-unchanged (`ls-files -v` tags them S or in lower case). */
async function hiddenFromStatus(worktreeRoot: string, prefix: RelPath, paths: RelPath[]): Promise<RelPath[]> {
  const listed = await lsFiles(worktreeRoot, prefix, ["-v"], paths).catch(() => null);
  if (!listed) return paths; // cannot tell: read them all
  const hidden: RelPath[] = [];
  for (const line of listed) {
    const tag = String.fromCharCode(line[0]);
    if (tag !== "S" && tag === tag.toUpperCase()) continue;
    hidden.push(fromTop(prefix, relFromBytes(line.subarray(2))));
  }
  return hidden;
}
