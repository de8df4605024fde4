import { type RelPath, relFromBytes } from "../paths.js";
import { splitNul } from "./exec.js";

/** One changed path between two trees, from `git diff-tree -r -z --raw --no-renames`. */
export interface RawChange {
  path: RelPath;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  status: string;
}

const ZERO_MODE = "000000";

/** Parses raw diff records (":old new oid oid status" NUL path NUL). Pure. */
export function parseRawDiff(output: Buffer): RawChange[] {
  const parts = splitNul(output);
  const changes: RawChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const header = parts[i].toString("latin1");
    if (!header.startsWith(":")) {
      i--; // diff-tree may print the compared commit id first; skip it
      continue;
    }
    const [oldMode, newMode, oldOid, newOid, status] = header.slice(1).split(" ");
    changes.push({ path: relFromBytes(parts[i + 1]), oldMode, newMode, oldOid, newOid, status: status[0] });
  }
  return changes;
}

export function isAbsentMode(mode: string): boolean {
  return mode === ZERO_MODE;
}
