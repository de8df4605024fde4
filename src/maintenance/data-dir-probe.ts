import { promises as fs } from "node:fs";
import path from "node:path";
import { dataHomeChosenBy } from "../util/data-dirs.js";

/**
 * Write permission is not enough: some file systems (/proc, a read-only bind mount seen by root)
 * refuse every mkdir. Only a directory made and removed again, next to where the store would go,
 * shows a store can be made there.
 */
export async function cannotMakeDirectoryIn(storeDir: string): Promise<string | null> {
  let existing = storeDir;
  while (
    !(await fs.stat(existing).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    if (path.dirname(existing) === existing) return null;
    existing = path.dirname(existing);
  }
  try {
    await fs.rmdir(await fs.mkdtemp(path.join(existing, ".ghostcommit-probe-")));
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return `the data directory cannot hold a store: no directory can be made in ${existing} (${code}) (${dataHomeChosenBy()})`;
  }
}
