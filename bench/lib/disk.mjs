// Store size on disk, leaving out files hard-linked from the user's repository (nlink > 1).
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";

/** `{ bytes, allocated }`: apparent size of own files, and blocks allocated to them and to directories. */
export function ownBytes(dir) {
  let bytes = 0;
  let allocated = 0;
  const walk = (current) => {
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const abs = path.join(current, entry.name);
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) {
        allocated += st.blocks * 512;
        walk(abs);
      } else if (st.nlink === 1) {
        bytes += st.size;
        allocated += st.blocks * 512;
      }
    }
  };
  walk(dir);
  return { bytes, allocated };
}
