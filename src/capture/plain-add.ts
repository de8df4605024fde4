import { accessSync, constants, lstatSync } from "node:fs";
import { fsPath, type RelPath, relBytes } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";

type Git = (args: string[], input?: Buffer, okCodes?: number[]) => Promise<{ code: number; stderr: string }>;

const ADD = ["update-index", "-z", "--add", "--remove", "--replace", "--stdin"];
/** Batches tried again, each without the one path git names as the one it could not read. */
const RETRIES = 8;

/**
 * Adds `paths` to the plain directory's index in one `git update-index`, which stops at the first
 * file it cannot read (a mode-000 file: then nothing is added). Such files are found without git
 * (a read check of each regular file), left out as `unreadable`, and the rest added again in one
 * call; a failure that remains (a file that became unreadable meanwhile) drops the path git names
 * and tries again, then, past a few, adds files one by one. One call per file made a snapshot of
 * a folder with one unreadable file take minutes (each call rewrites the whole index).
 */
export async function addToPlainIndex(
  root: string,
  paths: RelPath[],
  writeObjects: Git,
  excluded: StoredExclusion[],
): Promise<void> {
  const first = await writeObjects(ADD, nulList(paths), [0, 128]);
  if (first.code === 0) return;
  const unreadable = new Set(paths.filter((rel) => !readable(root, rel)));
  for (const rel of unreadable) excluded.push({ path: rel, reason: "unreadable" });
  let left = paths.filter((rel) => !unreadable.has(rel));
  for (let attempt = 0; left.length > 0 && attempt <= RETRIES; attempt++) {
    const result = await writeObjects(ADD, nulList(left), [0, 128]);
    if (result.code === 0) return;
    const named = failedPath(result.stderr, left);
    if (named === undefined) break;
    excluded.push({ path: named, reason: "unreadable" });
    left = left.filter((rel) => rel !== named);
  }
  for (const rel of left) {
    const one = await writeObjects(ADD, nulList([rel]), [0, 128]);
    if (one.code !== 0) excluded.push({ path: rel, reason: "unreadable" });
  }
}

/** Paths as `update-index -z --stdin` reads them. */
export function nulList(paths: RelPath[]): Buffer {
  return Buffer.concat(paths.flatMap((p) => [relBytes(p), Buffer.from([0])]));
}

/** A regular file this process may open for reading; anything else is git's to judge. */
function readable(root: string, rel: RelPath): boolean {
  const file = fsPath(root, rel);
  try {
    if (!lstatSync(file).isFile()) return true;
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path of `paths` git's "Unable to process path …" names, if it is one of them. */
function failedPath(stderr: string, paths: RelPath[]): RelPath | undefined {
  const at = stderr.lastIndexOf("Unable to process path ");
  if (at === -1) return undefined;
  const named = stderr.slice(at + "Unable to process path ".length).replace(/\n$/, "");
  return paths.find((rel) => relBytes(rel).toString("utf8") === named);
}
