import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats, statSync } from "node:fs";
import { fsPath, parentOf, type RelPath } from "../paths.js";

/*
 * Small files and directory listings read synchronously: a command makes dozens of these tiny
 * calls, many before its status starts, and a promise call's thread-pool round trips (four for a
 * read) cost more than the system calls themselves.
 */

/** A directory's names; none when it is missing or cannot be read. */
export function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A small file's text; "" when it is missing or cannot be read. */
export function readTextOrEmpty(file: string | Buffer): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/**
 * Whether something other than a directory is at `rel` in the workspace now, reached through real
 * directories only: past a directory since turned into a symlink, a same-named file elsewhere is
 * not the workspace's (any failure to look: no).
 */
export function isFileOnDisk(root: string, rel: RelPath): boolean {
  const stat = statBelow(root, rel);
  return stat !== undefined && !stat.isDirectory();
}

/** Whether something is at `rel` in the workspace now, as `isFileOnDisk` reaches it (a report only). */
export function existsNow(root: string, rel: RelPath): boolean {
  return statBelow(root, rel) !== undefined;
}

function statBelow(root: string, rel: RelPath): Stats | undefined {
  try {
    let parent = parentOf(rel);
    const parents: RelPath[] = [];
    for (; parent !== ""; parent = parentOf(parent)) parents.unshift(parent);
    for (const dir of parents)
      if (!lstatSync(fsPath(root, dir), { throwIfNoEntry: false })?.isDirectory()) return undefined;
    return lstatSync(fsPath(root, rel), { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * Where the symlink at `file` points, or null where there is none. A file read fails with ENOENT
 * both where nothing is and where a symlink points to nothing: only the first is no file.
 */
export function symlinkTarget(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}

/**
 * What a settings or rules file is where it is no file nor directory (a FIFO, a socket, a device):
 * reading one would wait forever, or read a device. Null for anything else (absent included).
 */
export function specialFileKind(file: string): string | null {
  let stat: Stats | undefined;
  try {
    stat = statSync(file, { throwIfNoEntry: false });
  } catch {
    return null; // the read reports it
  }
  if (!stat || stat.isFile() || stat.isDirectory()) return null;
  return stat.isFIFO() ? "a FIFO" : stat.isSocket() ? "a socket" : "a device";
}
