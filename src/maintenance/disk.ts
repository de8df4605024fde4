import { promises as fs } from "node:fs";
import path from "node:path";

/**
 * Bytes a directory's files occupy on disk, as `du` counts them (a loose object of 100 bytes takes
 * a block of 4 KiB: a store of many loose objects is several times their size until gc packs
 * them); files hard-linked from the user's repository (borrowed objects, link count > 1) cost
 * nothing extra and are not counted.
 */
export async function ownBytes(dir: string): Promise<number> {
  let total = 0;
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await ownBytes(full);
    else if (entry.isFile()) {
      const stat = await fs.lstat(full).catch(() => null);
      if (stat && stat.nlink <= 1) total += Number.isInteger(stat.blocks) ? stat.blocks * 512 : stat.size;
    }
  }
  return total;
}
