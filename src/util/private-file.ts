import type { Stats } from "node:fs";

/**
 * Owned by this user and writable by no one else: the test for a file whose content ghostcommit
 * runs (the code cache, a status plan).
 */
export function ownedPrivately(stat: Stats): boolean {
  return stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
}
