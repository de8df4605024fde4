import { runGit } from "../git/exec.js";
import type { StoreContext } from "./context.js";
import { updateRefsQuietly } from "./ref-updates.js";

/**
 * Where a fetch keeps the remote's snapshot links while it runs (see session/push-edges.ts): they
 * let git leave out what this store has, and must go once it is done, or they would keep dropped
 * snapshots alive. A fetch killed before removing them leaves them to the next fetch or to gc.
 */
export function fetchedLinksPrefix(engine: StoreContext): string {
  return engine.refs.refPrefix.replace(/snapshots\/$/, "fetched-links/");
}

/**
 * Where a fetch puts the snapshots it brings until it has judged their sessions: a snapshot of a
 * session this workspace has another history of is never listed, also when the fetch is cut off.
 */
export function fetchingSnapshotsPrefix(engine: StoreContext): string {
  return engine.refs.refPrefix.replace(/snapshots\/$/, "fetching/");
}

/** The temporary refs of a fetch there are now (its links and the snapshots not yet judged). */
export async function fetchedLinkRefs(engine: StoreContext): Promise<string[]> {
  const prefixes = [fetchedLinksPrefix(engine), fetchingSnapshotsPrefix(engine)];
  const listed = await runGit(["for-each-ref", "--format=%(refname)", ...prefixes], {
    cwd: engine.paths.dir,
    env: { GIT_DIR: engine.refs.refsGitDir },
  });
  return listed.stdout.toString("utf8").split("\n").filter(Boolean);
}

/** Removes them all (the caller holds what keeps a fetch from running meanwhile). */
export async function removeFetchedLinks(engine: StoreContext): Promise<number> {
  const refs = await fetchedLinkRefs(engine);
  if (refs.length === 0) return 0;
  await updateRefsQuietly(
    engine.paths.dir,
    engine.refs.refsGitDir,
    refs.map((ref) => `delete ${ref}\0\0`).join(""),
  );
  return refs.length;
}
