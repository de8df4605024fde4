import path from "node:path";
import { treeOfCommit } from "../git/objects.js";
import { readOptional } from "../git/repository.js";
import { decodeMessage } from "./metadata.js";
import type { StoredSnapshot } from "./store.js";

/** Snapshot refs and commits read from the files git keeps, without a git process. */

/** Whether ref `refName` of `gitDir` names `id`, loose or packed, read from git's files. */
export async function refHolds(gitDir: string, refName: string, id: string): Promise<boolean> {
  const loose = await readOptional(path.join(gitDir, ...refName.split("/")));
  if (loose?.toString("latin1").trim() === id) return true;
  const packed = await readOptional(path.join(gitDir, "packed-refs"));
  return packed?.toString("latin1").includes(`\n${id} ${refName}\n`) === true;
}

/** A snapshot from its commit's body: its tree and the metadata in its message (null if not one). */
export function snapshotOfCommit(id: string, body: string): StoredSnapshot | null {
  const tree = treeOfCommit(body);
  const split = body.indexOf("\n\n");
  const meta = split === -1 ? null : decodeMessage(body.slice(split + 2));
  return tree && meta ? { id, tree, meta } : null;
}

/** `dir` and its ancestors up to and including `top` (only `dir` without one). */
export function dirsUpTo(dir: string, top: string | undefined): string[] {
  const dirs = [dir];
  if (top === undefined) return dirs;
  for (let at = dir; at !== top && at.startsWith(top); ) {
    at = path.dirname(at);
    dirs.push(at);
  }
  return dirs;
}
