import { promises as fs, lstatSync } from "node:fs";
import { fsPath, type RelPath, relFromBytes, touchesGitDir } from "../paths.js";
import { hasUnsafeAncestor } from "./read-worktree.js";

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
    if (hasUnsafeAncestor(root, rel)) continue;
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
