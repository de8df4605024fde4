import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";

/** A bare repository, or a directory inside one or inside a `.git`, is no work tree to snapshot. */
export function refuseGitDirectory(root: string): void {
  for (let dir = root; ; dir = path.dirname(dir)) {
    if (path.basename(dir) === ".git") {
      throw new GhostcommitError(
        "not-a-workspace",
        `${root} is inside a .git directory: run ghostcommit in its work tree, ${path.dirname(dir)}`,
        { path: root },
      );
    }
    const isDir = (name: string) => lstatSync(path.join(dir, name), { throwIfNoEntry: false })?.isDirectory();
    if (validHead(path.join(dir, "HEAD")) && isDir("objects") && isDir("refs")) {
      throw new GhostcommitError("not-a-workspace", gitDirectoryRefusal(root, dir), { path: root });
    }
    if (path.dirname(dir) === dir) return;
  }
}

/**
 * Where to run instead of in git directory `dir`: its linked work trees where it has some; a
 * bare repository's clone; else (a `git init --separate-git-dir` one) its work tree elsewhere.
 */
function gitDirectoryRefusal(root: string, dir: string): string {
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const bare = /^\s*bare\s*=\s*true\s*$/im.test(read(path.join(dir, "config")));
  const linked = (() => {
    try {
      return readdirSync(path.join(dir, "worktrees"));
    } catch {
      return [];
    }
  })().flatMap((name) => {
    const gitFile = read(path.join(dir, "worktrees", name, "gitdir")).trim();
    return gitFile ? [path.dirname(gitFile)] : [];
  });
  const where =
    linked.length > 0
      ? `one of its work trees (${linked.join(", ")})`
      : bare
        ? "a clone of it"
        : "its work tree, where its .git file points here";
  return bare
    ? `${root} is in a bare repository (${dir}), which has no work tree to snapshot: run ghostcommit in ${where}`
    : `${root} is in a git directory (${dir}), which is no work tree to snapshot: run ghostcommit in ${where}`;
}

/** Whether HEAD holds what git accepts there: a symbolic ref under refs/, or an object id. */
export function validHead(file: string): boolean {
  try {
    return /^(ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(readFileSync(file, "latin1"));
  } catch {
    return false;
  }
}
