import { type Dirent, promises as fs, lstatSync, readdirSync } from "node:fs";
import { splitNul } from "../git/exec.js";
import { fsPath, isWithin, type RelPath, relFromBytes, touchesGitDir } from "../paths.js";
import { unreadableDirs } from "../git/status.js";
import { isGitDirectory, looksLikeRepository } from "./nested-check.js";
import { dependencyDirOf } from "./policy.js";

/** How a plain directory's snapshot finds the files no captured entry names. */

export interface Walked {
  /** Files and symlinks no index entry names, and nested repositories as "dir/". */
  untracked: RelPath[];
  /** Dependency directories, set aside whole. */
  dependencyDirs: RelPath[];
  /** Directories that could not be listed (permissions): what they hold is unknown. */
  unreadableDirs: RelPath[];
  /**
   * Git directories (a bare repository), set aside whole (`nested-repo`); `listed`: git listed
   * files in it, so the store's index may hold some (captured by an older version).
   */
  gitDirs: { path: RelPath; listed: boolean }[];
}

type Git = (args: string[]) => Promise<{ stdout: Buffer; stderr: string }>;

/**
 * The first snapshot's walk: everything is new, so git lists every file, with the dependency
 * directories left out of that walk and found by a second one.
 */
export async function walkTwice(
  git: Git,
  excludeFile: string,
  depNames: ReadonlySet<string>,
): Promise<Walked> {
  await fs.writeFile(excludeFile, [...depNames].map((d) => `${d}/\n`).join(""), { mode: 0o600 });
  const [othersOut, depsOut] = await Promise.all([
    git(["ls-files", "-z", "--others", `--exclude-from=${excludeFile}`]),
    git(["ls-files", "-z", "--others", "--ignored", "--directory", `--exclude-from=${excludeFile}`]),
  ]);
  const dependencyDirs: RelPath[] = [];
  for (const part of splitNul(depsOut.stdout)) {
    const dir = relFromBytes(part).replace(/\/$/, "");
    if (depNames.has(dir.slice(dir.lastIndexOf("/") + 1))) dependencyDirs.push(dir);
  }
  const untracked = splitNul(othersOut.stdout).map(relFromBytes);
  return { untracked, dependencyDirs, unreadableDirs: unreadableDirs(othersOut.stderr), gitDirs: [] };
}

/**
 * A later snapshot's walk: one git walk that reports each directory holding no captured file as
 * "dir/" (a dependency directory, a nested repository, or a directory new since the last
 * snapshot), instead of two walks of the whole tree. New directories are listed here, as git
 * would have listed them, with dependency directories and repositories found on the way.
 */
export async function walkOnce(git: Git, root: string, depNames: ReadonlySet<string>): Promise<Walked> {
  const listed = await git(["ls-files", "-z", "--others", "--directory", "--no-empty-directory"]);
  return expandListing(
    root,
    splitNul(listed.stdout).map(relFromBytes),
    depNames,
    unreadableDirs(listed.stderr),
  );
}

/** Git's listing with each directory it reported as "dir/" listed here (see `walkOnce`). */
export function expandListing(
  root: string,
  listed: RelPath[],
  depNames: ReadonlySet<string>,
  unreadable: RelPath[] = [],
): Walked {
  const walked: Walked = { untracked: [], dependencyDirs: [], unreadableDirs: [...unreadable], gitDirs: [] };
  for (const rel of listed) {
    if (!rel.endsWith("/")) walked.untracked.push(rel);
    else listNewDirectory(root, rel.slice(0, -1), depNames, walked);
  }
  return walked;
}

export function isDirectory(file: Buffer): boolean {
  try {
    return lstatSync(file).isDirectory();
  } catch {
    return false; // gone, or below what is now a file
  }
}

export function listNewDirectory(
  root: string,
  dir: RelPath,
  depNames: ReadonlySet<string>,
  walked: Walked,
): void {
  if (depNames.has(dir.slice(dir.lastIndexOf("/") + 1))) {
    walked.dependencyDirs.push(dir);
    return;
  }
  // A `.git` directory where files were captured: the nested-repository check sees it.
  if (touchesGitDir(dir)) {
    walked.untracked.push(dir);
    return;
  }
  // Inside a dependency directory that holds an included file, or a repository: the policy decides.
  if (dependencyDirOf(`${dir}/x`, depNames) !== null || looksLikeRepository(root, dir)) {
    walked.untracked.push(`${dir}/`);
    return;
  }
  if (isGitDirectory(root, dir)) {
    walked.gitDirs.push({ path: dir, listed: false });
    return;
  }
  let entries: Dirent<Buffer>[];
  try {
    entries = readdirSync(fsPath(root, dir), { withFileTypes: true, encoding: "buffer" });
  } catch (error) {
    // Gone since git's walk: nothing to list. Unreadable: said, so no restore takes its files for absent.
    if ((error as NodeJS.ErrnoException).code === "EACCES") walked.unreadableDirs.push(dir);
    return;
  }
  for (const entry of entries) {
    const rel = `${dir}/${relFromBytes(entry.name)}`;
    // Like git: regular files and symlinks are listed, sockets and fifos are not.
    if (entry.isDirectory()) listNewDirectory(root, rel, depNames, walked);
    else if (entry.isFile() || entry.isSymbolicLink()) walked.untracked.push(rel);
  }
}

/**
 * Sets aside the files git listed inside git directories (see `isGitDirectory`): those of the
 * walk, and the captured ones that changed. Each directory is checked once, the outermost wins;
 * ghostcommit's own data directory is left to the policy (`store`).
 */
export function setGitDirsAside(
  root: string,
  listing: { changed: { path: RelPath; deleted: boolean }[]; walked: Walked },
  dataDir: RelPath | null,
): void {
  const above = new Map<RelPath, RelPath | null>([["", null]]);
  const gitDirAbove = (dir: RelPath): RelPath | null => {
    let found = above.get(dir);
    if (found === undefined) {
      const slash = dir.lastIndexOf("/");
      found = gitDirAbove(slash === -1 ? "" : dir.slice(0, slash));
      if (found === null && !touchesGitDir(dir) && isGitDirectory(root, dir)) found = dir;
      above.set(dir, found);
    }
    return found;
  };
  const listed = new Set<RelPath>();
  const keep = (rel: RelPath) => {
    if (dataDir !== null && isWithin(rel, dataDir)) return true;
    const name = rel.endsWith("/") ? rel.slice(0, -1) : rel;
    const dir = gitDirAbove(name.slice(0, Math.max(0, name.lastIndexOf("/"))));
    if (dir !== null) listed.add(dir);
    return dir === null;
  };
  listing.walked.untracked = listing.walked.untracked.filter(keep);
  listing.changed = listing.changed.filter((c) => c.deleted || keep(c.path));
  for (const path of listed) listing.walked.gitDirs.push({ path, listed: true });
}
