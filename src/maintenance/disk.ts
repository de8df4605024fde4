import { promises as fs } from "node:fs";
import path from "node:path";

/**
 * Bytes the files and directories below a directory occupy on disk, as `du` counts them (a loose
 * object of 100 bytes takes a block of 4 KiB, and so may its fan-out directory: a store of many
 * loose objects is several times their size until gc packs them); files hard-linked from the
 * user's repository (borrowed objects, link count > 1) cost nothing extra and are not counted.
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
    const stat = entry.isDirectory() || entry.isFile() ? await fs.lstat(full).catch(() => null) : null;
    if (!stat) continue;
    // A directory's own blocks count too (a fan-out directory of one loose object takes a block).
    if (entry.isDirectory()) total += blocksOf(stat) + (await ownBytes(full));
    else if (stat.nlink <= 1) total += blocksOf(stat);
  }
  return total;
}

function blocksOf(stat: import("node:fs").Stats): number {
  return Number.isInteger(stat.blocks) ? stat.blocks * 512 : stat.size;
}
