import { existsSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import type { SnapshotRefs } from "./store.js";

/**
 * Which of `ids` the workspace no longer holds (expired by retention or dropped): one listing of
 * the store's snapshot refs, whatever the number of ids, and only when some are missing there,
 * one of the workspace's other store (a session recorded before its `store` setting changed
 * keeps its snapshots there: they are not gone).
 */
export async function goneSnapshots(refs: SnapshotRefs, ids: Iterable<string>): Promise<Set<string>> {
  const wanted = new Set(ids);
  if (wanted.size === 0) return wanted;
  // As rewind counts them: a ref left to a commit that is no snapshot holds none.
  const listed = new Set((await refs.list()).map((s) => s.id));
  const missing = [...wanted].filter((id) => !listed.has(id));
  if (missing.length === 0) return new Set();
  const elsewhere = await otherStoreIds(refs);
  return new Set(missing.filter((id) => !elsewhere.has(id)));
}

async function otherStoreIds(refs: SnapshotRefs): Promise<Set<string>> {
  const other = refs.otherStore();
  if (!other || !existsSync(path.join(other.gitDir, "HEAD"))) return new Set();
  const result = await runGit(["for-each-ref", "--format=%(objectname)", other.prefix], {
    cwd: other.gitDir,
    env: { GIT_DIR: other.gitDir },
    okCodes: [0, 128],
  });
  const lines = result.stdout.toString("latin1").split("\n");
  return new Set(lines.filter((line) => /^[0-9a-f]{40}$/.test(line)));
}
