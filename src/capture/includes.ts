import { promises as fs, lstatSync } from "node:fs";
import { ancestorsOf, fsPath, isCleanRel, type RelPath, relFromBytes, touchesGitDir } from "../paths.js";
import { hasUnsafeAncestor } from "./read-worktree.js";
import type { StoreContext } from "../store/context.js";

/**
 * Expands force-included and touched paths into the files below them. Never follows a symlink,
 * never enters a `.git` directory or a nested repository; a path reached through a symlinked
 * ancestor is dropped, so nothing outside the workspace is read.
 */
export async function expandIncludes(root: string, includes: Iterable<RelPath>): Promise<RelPath[]> {
  const out = new Set<RelPath>();
  for (const rel of includes) {
    if (rel === "" || touchesGitDir(rel)) {
      if (rel === "") await walk(root, "", out);
      continue;
    }
    // Outside the workspace (a forged journal's `../x`), or reached through a symlink: never read.
    if (!isCleanRel(rel) || hasUnsafeAncestor(root, rel)) continue;
    let isDir = false;
    try {
      // Synchronous, like the ancestors' check: usually one path, a hook's.
      isDir = lstatSync(fsPath(root, rel)).isDirectory();
    } catch {
      out.add(rel); // absent now: the caller records it as absent
      continue;
    }
    if (isDir) await walk(root, rel, out);
    else out.add(rel);
  }
  return [...out];
}

async function walk(root: string, dir: RelPath, out: Set<RelPath>): Promise<void> {
  let entries: import("node:fs").Dirent<Buffer>[];
  try {
    entries = await fs.readdir(fsPath(root, dir), { withFileTypes: true, encoding: "buffer" });
  } catch {
    return;
  }
  if (dir !== "" && entries.some((e) => e.name.toString("latin1") === ".git")) return; // nested repository
  for (const entry of entries) {
    const name = relFromBytes(entry.name);
    if (name === ".git") continue;
    const rel = dir === "" ? name : `${dir}/${name}`;
    if (entry.isDirectory()) await walk(root, rel, out);
    else out.add(rel);
  }
}

/**
 * `files` (expanded includes) split by whether they lie in a nested repository or submodule (a
 * directory below the workspace's top holding a `.git`): a git workspace's capture leaves those
 * out (a file read into its tree would replace the submodule's gitlink), unless
 * `"nestedRepos": "capture"`, whose capture of each repository takes its touched files too.
 */
export function splitByRepository(
  root: string,
  files: RelPath[],
): { outside: RelPath[]; inRepos: Set<RelPath> } {
  const holdsGit = new Map<RelPath, boolean>();
  const inRepository = (rel: RelPath) =>
    ancestorsOf(rel).some((dir) => {
      let holds = holdsGit.get(dir);
      if (holds === undefined) {
        holds = lstatSync(fsPath(root, `${dir}/.git`), { throwIfNoEntry: false }) !== undefined;
        holdsGit.set(dir, holds);
      }
      return holds;
    });
  const outside: RelPath[] = [];
  const inRepos = new Set<RelPath>();
  for (const rel of files) inRepository(rel) ? inRepos.add(rel) : outside.push(rel);
  return { outside, inRepos };
}

/** The files below `rels` that a capture of this workspace takes (see `splitByRepository`). */
export async function capturedIncludes(
  store: Pick<StoreContext, "root" | "location" | "settings">,
  rels: Iterable<RelPath>,
): Promise<RelPath[]> {
  const files = await expandIncludes(store.root, rels);
  if (store.location.kind !== "git" || store.settings.nestedRepos === "capture") return files;
  return splitByRepository(store.root, files).outside;
}

/** Of `rels`, those a capture of this workspace leaves out as lying in another repository. */
export function inOtherRepositories(
  store: Pick<StoreContext, "root" | "location" | "settings">,
  rels: RelPath[],
): RelPath[] {
  if (store.location.kind !== "git" || store.settings.nestedRepos === "capture") return [];
  return [...splitByRepository(store.root, rels).inRepos];
}
