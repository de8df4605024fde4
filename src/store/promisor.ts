import { readdirSync } from "node:fs";
import path from "node:path";
import type { StoreContext } from "./context.js";

/**
 * Git options under which the store treats what a partial clone of yours has not downloaded as
 * promised, not lost. A snapshot names the blobs of your index and HEAD, those outside a sparse
 * cone included, which such a clone may never have fetched: restoring the snapshot never needs
 * them (those files are not on disk), but a walk of every object (gc's repack, doctor's check)
 * stopped at them, so doctor called every snapshot damaged and `doctor --repair` dropped them all.
 * Objects your promisor packs name may be missing; any other missing object still counts. The
 * remote has no usable URL: nothing is ever fetched (git fetches missing objects only on a read).
 */
export function promisedObjectsArgs(engine: StoreContext): string[] {
  const userGitDir = engine.location.commonDir;
  if (!userGitDir) return [];
  let names: string[];
  try {
    names = readdirSync(path.join(userGitDir, "objects", "pack"));
  } catch {
    return [];
  }
  if (!names.some((name) => name.endsWith(".promisor"))) return [];
  return [
    "-c",
    "remote.ghostcommit-promised.promisor=true",
    "-c",
    "remote.ghostcommit-promised.url=/dev/null",
  ];
}
