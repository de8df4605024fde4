import { lstatSync, readdirSync, readFileSync } from "node:fs";

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

/** Whether something other than a directory is at `file` now (any failure to look: no). */
export function isFileOnDisk(file: Buffer): boolean {
  try {
    const stat = lstatSync(file, { throwIfNoEntry: false });
    return stat !== undefined && !stat.isDirectory();
  } catch {
    return false;
  }
}

/** Whether something is at `file` now (a report only: any failure to look counts as nothing). */
export function existsNow(file: Buffer): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
