import { closeSync, lstatSync, openSync, type PathLike, readSync, type Stats, statSync } from "node:fs";
import path from "node:path";
import type { StatusEntry } from "../git/status.js";
import { ancestorsOf, fsPath, type RelPath } from "../paths.js";

/**
 * Git's untracked cache serves a directory's listing without looking at the directories it
 * lists again: after `git init` inside an untracked directory whose parent did not change, git
 * 2.39 still lists that directory's files one by one, and a directory whose `.git` was removed
 * still shows as a repository ("dir/"). This looks at each untracked directory the way git does
 * when it reads it, and corrects the status entries: a repository shows as "dir/" (the
 * nested-repo rule applies), a former one is listed by `listPlain` (git, without the cache).
 */
export async function reconcileNestedRepos(
  entries: StatusEntry[],
  worktreeRoot: string,
  hasTrackedFiles: (dir: RelPath) => Promise<boolean>,
  listPlain: (dir: RelPath) => Promise<RelPath[]>,
): Promise<StatusEntry[]> {
  const untrackedDirs = new Set<RelPath>();
  const reportedRepos: RelPath[] = [];
  for (const entry of entries) {
    if (entry.kind !== "untracked") continue;
    if (entry.path.endsWith("/")) reportedRepos.push(entry.path.slice(0, -1));
    else for (const dir of ancestorsOf(entry.path)) untrackedDirs.add(dir);
  }
  const found: RelPath[] = [];
  // A name that is not UTF-8 cannot be handed back to git as a pathspec: git's answer stands.
  const passable = (dir: RelPath) =>
    Buffer.from(Buffer.from(dir, "latin1").toString("utf8"), "utf8").toString("latin1") === dir;
  for (const dir of [...untrackedDirs].filter(passable).sort()) {
    // Sorted, so an outer repository comes before the directories inside it.
    if (found.some((outer) => dir.startsWith(`${outer}/`))) continue;
    if (looksLikeRepository(worktreeRoot, dir) && !(await hasTrackedFiles(dir))) found.push(dir);
  }
  const gone = reportedRepos.filter((dir) => passable(dir) && !looksLikeRepository(worktreeRoot, dir));
  if (found.length === 0 && gone.length === 0) return entries;

  const inFound = (path: RelPath) => found.some((dir) => path.startsWith(`${dir}/`));
  const goneSet = new Set(gone.map((dir) => `${dir}/`));
  const out: StatusEntry[] = [];
  for (const entry of entries) {
    if (entry.kind === "untracked" && (goneSet.has(entry.path) || inFound(entry.path))) continue;
    out.push(entry);
  }
  for (const dir of found) out.push({ kind: "untracked", path: `${dir}/` });
  for (const dir of gone) {
    for (const path of await listPlain(dir)) out.push({ kind: "untracked", path });
  }
  return out;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Whether git would take `dir` for a repository of its own: a `.git` directory with a HEAD, or a
 * gitfile (`gitdir: <path>`) naming one. An empty `.git` directory, a stray `.git` file or a gitfile
 * pointing nowhere makes none: git lists the files there as any others.
 */
export function looksLikeRepository(worktreeRoot: string, dir: RelPath): boolean {
  // Called for every untracked directory: no exceptions for the usual "no .git here", and a
  // plain string for the usual ASCII name.
  const dotGit = PRINTABLE_ASCII.test(dir)
    ? `${worktreeRoot}/${dir}/.git`
    : fsPath(worktreeRoot, `${dir}/.git`);
  const stat = quietStat(() => lstatSync(dotGit, { throwIfNoEntry: false }));
  if (!stat) return false;
  if (stat.isDirectory()) {
    return (
      quietStat(() =>
        statSync(fsPath(worktreeRoot, `${dir}/.git/HEAD`), { throwIfNoEntry: false }),
      )?.isFile() ?? false
    );
  }
  if (!stat.isFile()) return false;
  const text = readStart(dotGit, 4096, "utf8");
  if (text === null) return false; // unreadable: git could not use it either
  const target = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  if (!target) return false;
  // A relative target is relative to the directory (whose name may not be UTF-8: kept as bytes).
  const head = path.isAbsolute(target)
    ? path.join(target, "HEAD")
    : typeof dotGit === "string"
      ? path.join(path.dirname(dotGit), target, "HEAD")
      : Buffer.concat([dotGit.subarray(0, dotGit.lastIndexOf(0x2f) + 1), Buffer.from(`${target}/HEAD`)]);
  return quietStat(() => statSync(head, { throwIfNoEntry: false }))?.isFile() ?? false;
}

/**
 * Whether `dir` is itself a git directory, as git's own check has it: a HEAD naming a ref or a
 * commit, and `objects/` and `refs/` directories (or a `commondir` file saying where they are).
 * A bare repository, or the git directory `git init --separate-git-dir` put there: git's walk
 * lists its refs and objects as plain files, but they are git's own data.
 */
export function isGitDirectory(root: string, dir: RelPath): boolean {
  const stat = (name: string) =>
    quietStat(() => statSync(fsPath(root, `${dir}/${name}`), { throwIfNoEntry: false }));
  if (!stat("HEAD")?.isFile()) return false;
  const head = readStart(fsPath(root, `${dir}/HEAD`), 80, "latin1");
  if (head === null) return false; // unreadable: git could not use it either
  if (!/^(ref: refs\/|[0-9a-f]{40}(?:[0-9a-f]{24})?\s)/.test(head)) return false;
  return (
    stat("commondir")?.isFile() || (stat("objects")?.isDirectory() && stat("refs")?.isDirectory()) || false
  );
}

/**
 * A stat that a directory this user may not search answers with "nothing there" (EACCES): git
 * cannot use a repository there either, and its files are reported as unreadable where read.
 */
function quietStat(stat: () => Stats | undefined): Stats | undefined {
  try {
    return stat();
  } catch {
    return undefined;
  }
}

/** The first `size` bytes of a file as text; null when it cannot be read. */
function readStart(file: PathLike, size: number, encoding: BufferEncoding): string | null {
  try {
    const bytes = Buffer.alloc(size);
    const fd = openSync(file, "r");
    try {
      return bytes.toString(encoding, 0, readSync(fd, bytes, 0, size, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
