import { GhostcommitError } from "../errors.js";
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

/** `git diff-tree` as ghostcommit asks it, the two trees to follow (or, with `--stdin`, on stdin). */
export const DIFF_TREE = ["diff-tree", "-r", "-z", "--raw", "--no-renames", "--abbrev=40"];

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

/**
 * The answer of `diff-tree --stdin` to one line naming `from` and `to`: that line comes back
 * first, then the raw records. Git skips a line it cannot answer (a tree missing) with only a
 * message and success, so an answer without it is that failure.
 */
export function parseStdinDiff(output: Buffer, from: string, to: string, stderr = ""): RawChange[] {
  const header = Buffer.from(`${from} ${to}\n`);
  if (!output.subarray(0, header.length).equals(header)) {
    const reason = stderr.trim().split("\n").filter(Boolean).pop();
    throw new GhostcommitError(
      "git-failed",
      `git diff-tree could not compare ${from} with ${to}${reason ? `: ${reason}` : ""}`,
      { stderr: stderr.slice(0, 4000) },
    );
  }
  return parseRawDiff(output.subarray(header.length));
}

/**
 * A tree of a comparison in the store that git cannot read (a pack deleted, a disk error), said as
 * the store's damage with the way on, instead of git's words; null for any other failure.
 */
export function missingObject(stderr: string): GhostcommitError | null {
  const oid = /(?:could not read|unable to read tree|bad tree object) ([0-9a-f]{40,64})/i.exec(stderr)?.[1];
  return oid ? missingObjectError(oid) : null;
}

/** The store lacks `oid`: said with the way on, whichever read found it (`detail`: what that means here). */
export function missingObjectError(oid: string, detail = ""): GhostcommitError {
  return new GhostcommitError(
    "store-damaged",
    `the store is missing object ${oid}${detail}: \`ghostcommit doctor\` names the snapshots it damages, \`doctor --repair\` drops them`,
    { oid },
  );
}

export function isAbsentMode(mode: string): boolean {
  return mode === ZERO_MODE;
}
