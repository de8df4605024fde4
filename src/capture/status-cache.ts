import { randomHex } from "../util/crypto.js";
import { existsSync, promises as fs, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { indexEntryCount } from "../git/index-file.js";
import { STORE_FILES } from "../store/layout.js";
import { startDetachedWorker, startDetachedWorkerAfterExit } from "../util/detached.js";

/**
 * Git's untracked cache, built off the command's clock on large trees. The status that makes a
 * private index copy must also build the cache in it and write the copy (~150 ms more than a
 * plain status on 100k files): the first snapshot in a new store, and the first after each
 * change to the user's index (a commit, a `git add`). On a large tree that status instead reads
 * the user's index without writing anything, which costs what a plain status costs, and a
 * detached process makes the copy and builds its cache for the snapshots after it.
 */

/** From this many index entries; on smaller trees the build costs a few milliseconds. */
export const BACKGROUND_BUILD_FILES = 20_000;

/** A claim this old belongs to a builder that died: a build takes seconds. */
const CLAIM_STALE_MS = 5 * 60_000;

// dist/capture/status-cache.js, or the bundled CLI in dist/ beside dist/capture/.
const WORKER = [
  new URL("./status-cache-worker.js", import.meta.url),
  new URL("./capture/status-cache-worker.js", import.meta.url),
];

function claimFile(storeDir: string): string {
  return path.join(storeDir, STORE_FILES.statusIndexBuild);
}

/** A detached process is building the copy now. */
export async function buildInProgress(storeDir: string): Promise<boolean> {
  const claim = statSync(claimFile(storeDir), { throwIfNoEntry: false });
  return claim !== undefined && Date.now() - claim.mtimeMs < CLAIM_STALE_MS;
}

/** Whether the copy this status needs is better built by a detached process. */
export async function buildInBackground(userIndex: string): Promise<boolean> {
  if (((await indexEntryCount(userIndex)) ?? 0) < BACKGROUND_BUILD_FILES) return false;
  return WORKER.some((url) => existsSync(url));
}

/** A build the capture decided on: the token of its process when one already waits (see below). */
export interface DeferredBuild {
  waiting: string | null;
}

/**
 * In a command's short-lived process, the build's process is started beside status and waits
 * for the command's end; it runs only if `startStatusCacheBuild` then claims the build for it.
 * Elsewhere (a library call, a server) nothing waits: the build starts when it is claimed.
 */
export function prepareStatusCacheBuild(
  storeDir: string,
  root: string,
  store: string,
  logFile: string,
): DeferredBuild {
  const token = randomHex(8);
  const waits = startDetachedWorkerAfterExit(
    WORKER,
    [root, store],
    root,
    logFile,
    claimFile(storeDir),
    token,
  );
  return { waiting: waits ? token : null };
}

/**
 * Starts the detached build unless one is running (the claim is taken first, so concurrent
 * snapshots start one between them), or lets the process waiting for it go ahead once this one
 * ends. Its errors go to the store's log: a failed build only means the next snapshot reads the
 * user's index again.
 */
export async function startStatusCacheBuild(
  storeDir: string,
  root: string,
  store: string,
  logFile: string,
  build: DeferredBuild = { waiting: null },
) {
  const claim = claimFile(storeDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // Synchronous: tiny calls at the end of a snapshot, before its process can exit.
      writeFileSync(claim, build.waiting === null ? "" : `${build.waiting}\n`, { flag: "wx", mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) return;
      if (await buildInProgress(storeDir)) return;
      rmSync(claim, { force: true });
    }
  }
  if (build.waiting !== null) return; // it starts when this process ends
  if (!startDetachedWorker(WORKER, [root, store], root, logFile)) await releaseBuildClaim(storeDir);
}

export function releaseBuildClaim(storeDir: string): Promise<void> {
  return fs.rm(claimFile(storeDir), { force: true });
}
