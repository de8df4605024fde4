import { nodeCrypto } from "../util/crypto.js";
import type { RelPath } from "../paths.js";

/** Git objects' formats: ids, modes, tree and commit bodies (the writer is in loose-objects.ts). */

export type ObjectType = "blob" | "tree" | "commit";

export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Entry modes git stores. */
export const MODE = {
  file: "100644",
  exec: "100755",
  link: "120000",
  tree: "40000",
  gitlink: "160000",
} as const;

/** The id of the empty blob. */
export const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

export function objectId(type: ObjectType, content: Buffer): string {
  return nodeCrypto().createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/** One entry of a tree object. `name` is a single path component (binary string). */
export interface TreeEntry {
  mode: string;
  name: RelPath;
  oid: string;
  /** The id's 20 bytes as a binary string, kept by `parseTree` so serializing copies it as is. */
  raw?: string;
}

/**
 * Parses the binary body of a tree object. Read as one binary string (a char per byte): one
 * conversion per tree instead of three per entry. `hexIds: false` leaves each `oid` empty, for a
 * caller that keeps most entries as they are (their `raw` bytes) and asks `hexIdOf` for the few
 * it looks at: spelling out every id was most of parsing the ~50 trees a snapshot edits.
 */
export function parseTree(body: Buffer, { hexIds = true } = {}): TreeEntry[] {
  const text = body.toString("latin1");
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < text.length) {
    const space = text.indexOf(" ", at);
    const nul = text.indexOf("\0", space);
    const mode = text.slice(at, space);
    // One native call: 20 string concatenations per id, in code that runs cold, took 3-4 times
    // as long (~15 µs an id in a snapshot's process).
    const oid = hexIds ? body.toString("hex", nul + 1, nul + 21) : "";
    const raw = text.slice(nul + 1, nul + 21);
    entries.push({ mode: mode === "040000" ? MODE.tree : mode, name: text.slice(space + 1, nul), oid, raw });
    at = nul + 21;
  }
  return entries;
}

/** An entry's id in hex, spelled out from its bytes where `parseTree` left it empty. */
export function hexIdOf(entry: TreeEntry): string {
  return entry.oid !== "" || entry.raw === undefined
    ? entry.oid
    : Buffer.from(entry.raw, "latin1").toString("hex");
}

/**
 * Serializes entries (any order) into a tree object body, in git's order: bytewise by name, a
 * directory compared as if its name ended in '/'. Names are binary strings (one char per byte),
 * so comparing them as strings compares bytes.
 */
export function serializeTree(entries: TreeEntry[]): Buffer {
  // An edited tree is mostly its parsed entries, still in order: sorted only when it is not.
  let ordered = entries;
  for (let i = 1; i < entries.length; i++) {
    if (compareEntries(entries[i - 1], entries[i]) >= 0) {
      ordered = [...entries].sort(compareEntries);
      break;
    }
  }
  // One binary string, encoded once: three checked Buffer writes per entry cost a snapshot's
  // ~50 edited trees several milliseconds in a process whose code still runs cold.
  let text = "";
  for (const entry of ordered) {
    const raw = entry.raw ?? Buffer.from(entry.oid, "hex").toString("latin1");
    if (raw.length !== 20) throw new Error(`not an object id: ${entry.oid}`);
    text += `${entry.mode} ${entry.name}\0${raw}`;
  }
  return Buffer.from(text, "latin1");
}

/** Git's tree order. */
function compareEntries(a: TreeEntry, b: TreeEntry): number {
  const x = a.mode === MODE.tree ? `${a.name}/` : a.name;
  const y = b.mode === MODE.tree ? `${b.name}/` : b.name;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Builds a commit object body. Time is in seconds; identity is fixed so user config never leaks in. */
export function serializeCommit(fields: {
  tree: string;
  parents: string[];
  time: number;
  message: string;
}): Buffer {
  const who = `ghostcommit <ghostcommit@localhost> ${fields.time} +0000`;
  const lines = [
    `tree ${fields.tree}`,
    ...fields.parents.map((p) => `parent ${p}`),
    `author ${who}`,
    `committer ${who}`,
  ];
  return Buffer.from(`${lines.join("\n")}\n\n${fields.message}`, "utf8");
}

/** The root tree named by a commit object's body; null when the body names none. */
export function treeOfCommit(body: Buffer | string): string | null {
  const text = typeof body === "string" ? body : body.subarray(0, 46).toString("latin1");
  return /^tree ([0-9a-f]{40})/.exec(text)?.[1] ?? null;
}

/** What one writer put into its objects directory: loose objects, and packs with their objects. */
export interface WrittenObjects {
  loose: string[];
  packs: { file: string; oids: string[] }[];
}
