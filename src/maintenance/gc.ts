import { readLastSafety } from "../store/last-safety.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { runGit } from "../git/exec.js";
import { STORE_FILES } from "../store/layout.js";
import type { StoredSnapshot } from "../store/store.js";
import { heldByLive, liveSharedHolders, withLock } from "../util/lock.js";
import { staleGitLocks } from "./store-check.js";
import { ownBytes } from "./disk.js";
import { contentBytesFreedBy, dropFreesAnything, dropRebuiltCaches, outOfRoom } from "./freeable.js";
import { pack } from "./pack-store.js";
import { NO_FSMONITOR } from "../git/exec.js";

export interface GcPolicy {
  /** Expire snapshots created before this time (ms since epoch). */
  olderThan?: number;
  /** Keep at most this many (newest first). */
  keep?: number;
  /** Expire oldest first while the store is larger than this. */
  maxBytes?: number;
}

export interface GcOutcome {
  dropped: string[];
  kept: string[];
  bytesBefore: number;
  bytesAfter: number;
  /**
   * Set when the store stays over the size cap: dropping the unprotected snapshots left (if any)
   * would free nothing, so none was dropped for it.
   */
  overCap?: { maxBytes: number; unprotectedLeft: number };
}

/** How long gc waits for object writers that began before it, before it packs around them. */
const WRITER_WAIT_MS = 60_000;

/** What gc keeps whatever its policy says (decided by the sessions layer). */
export interface Protected {
  /** Snapshots retention never expires. */
  ids: Set<string>;
  /** Trees no ref names that must outlive the prune: the progress marks of open turns. */
  trees: string[];
}

export type Protection = (snapshots: StoredSnapshot[]) => Promise<Protected>;

/**
 * Expires snapshots by age, count and store size, oldest first, never the protected ones, then
 * packs the store. Unreachable objects are pruned at once: object writers hold the shared side
 * of the gc lock (StoreContext.writing), and gc prunes only once none is left. Should one not
 * finish in time, objects of the last ten minutes are spared instead.
 */
export async function collectGarbage(
  engine: StoreContext,
  policy: GcPolicy,
  protection: Protection,
  writerWaitMs = WRITER_WAIT_MS,
): Promise<GcOutcome> {
  // On a full disk even gc's lock may not be written: the caches the store rebuilds make room.
  return collect(engine, policy, protection, writerWaitMs).catch(async (error: unknown) => {
    if (!outOfRoom(error)) throw error;
    await dropRebuiltCaches(engine);
    return collect(engine, policy, protection, writerWaitMs);
  });
}

/** Freed content the store's size shows for sure: its size counts whole blocks of a pack. */
const MEASURABLE_BYTES = 16 * 1024;

async function collect(
  engine: StoreContext,
  policy: GcPolicy,
  protection: Protection,
  writerWaitMs: number,
): Promise<GcOutcome> {
  return withLock(path.join(engine.paths.dir, STORE_FILES.gcLock), async () => {
    // No snapshot writing (new ones wait for gc): a git lock in the store is a dead git's, and
    // would fail this gc's ref updates, and every later one's.
    if (liveSharedHolders(path.join(engine.paths.dir, STORE_FILES.writersDir)).length === 0) {
      for (const file of await staleGitLocks(engine, -1)) await fs.rm(file, { force: true });
    }
    const measure = () => storeBytes(engine);
    const bytesBefore = await measure();
    const snapshots = await engine.refs.list(); // newest first
    const { ids: keep, trees } = await protection(snapshots);
    // A restore publishes its safety snapshot before last-safety.json names it (once its plan is
    // made): while a restore runs, the newest safety snapshot may be its way back, so it stays.
    // Checked before last-safety.json is read: a restore lets go of its lock only after writing it.
    if (heldByLive(path.join(engine.paths.dir, STORE_FILES.restoreLock))) {
      const running = snapshots.find((s) => s.meta.kind === "safety");
      if (running) keep.add(running.id);
    }
    const lastSafety = await readLastSafety(engine);
    if (lastSafety) keep.add(lastSafety);
    const drop = new Set<string>();
    snapshots.forEach((s, index) => {
      if (keep.has(s.id)) return;
      if (policy.olderThan !== undefined && s.meta.t / 1000 < policy.olderThan) drop.add(s.id);
      if (policy.keep !== undefined && index >= policy.keep) drop.add(s.id);
    });
    await engine.refs.remove([...drop]);
    if (engine.refs.kind === "shadow") await pack(engine, writerWaitMs, trees);
    let overCap: GcOutcome["overCap"];
    if (policy.maxBytes !== undefined) {
      // Over the cap: drop the oldest unprotected snapshots until under it (or none are left),
      // no more than needed. What a snapshot frees is known only after a repack: each round
      // drops as many as the excess over what one freed on average so far (first, the store's
      // size over its snapshots), at most a quarter of those left, so the repacks stay few.
      // Before each round: if dropping all that are left would free nothing (what is over the cap
      // is what the kept snapshots need), none is dropped for it.
      const oldestFirst = snapshots.filter((s) => !drop.has(s.id) && !keep.has(s.id)).reverse();
      let size = await measure();
      let perSnapshot = size / Math.max(1, snapshots.length - drop.size);
      while (size > policy.maxBytes) {
        const ids = oldestFirst.map((s) => s.id);
        const left = new Set(ids);
        // Their trees too: rev-list spares a tree of a commit not given as a parent only if named.
        const staying = snapshots
          .filter((s) => !drop.has(s.id) && !left.has(s.id))
          .flatMap((s) => [s.id, s.tree]);
        if (!(await dropFreesAnything(engine, ids, staying, trees))) {
          overCap = { maxBytes: policy.maxBytes, unprotectedLeft: oldestFirst.length };
          break;
        }
        const quarter = Math.ceil(oldestFirst.length / 4);
        const needed = perSnapshot > 0 ? Math.ceil((size - policy.maxBytes) / perSnapshot) : quarter;
        const batch = oldestFirst.splice(0, Math.max(1, Math.min(needed, quarter)));
        // A batch whose files later snapshots hold too frees nothing by itself (each snapshot
        // holds every file): the rounds go on to those. Only one whose own files should have
        // freed room and did not (objects a running writer still guards) ends them.
        const rest = [...staying, ...oldestFirst.flatMap((s) => [s.id, s.tree])];
        const batchBytes = await contentBytesFreedBy(
          engine,
          batch.map((s) => s.id),
          rest,
          trees,
        );
        await engine.refs.remove(batch.map((s) => s.id));
        for (const s of batch) drop.add(s.id);
        if (engine.refs.kind === "shadow") await pack(engine, writerWaitMs, trees);
        const after = await measure();
        perSnapshot = (size - after) / batch.length;
        if (batchBytes >= MEASURABLE_BYTES && after >= size && after > policy.maxBytes) {
          overCap = { maxBytes: policy.maxBytes, unprotectedLeft: oldestFirst.length };
          size = after;
          break;
        }
        size = after;
      }
    }
    const bytesAfter = await measure();
    return {
      dropped: snapshots.filter((s) => drop.has(s.id)).map((s) => s.id),
      kept: snapshots.filter((s) => !drop.has(s.id)).map((s) => s.id),
      bytesBefore,
      bytesAfter,
      ...(overCap ? { overCap } : {}),
    };
  });
}

/**
 * The bytes a store takes: the shadow store's workspace data directory as the disk holds it (its
 * git directory, the index copies and caches beside it, the directories themselves); in the repo store, the objects
 * on disk that only its snapshots reach in your repository (not your refs, HEAD or index), which
 * your repository's next gc frees once they are dropped.
 */
export async function storeBytes(engine: StoreContext): Promise<number> {
  if (engine.refs.kind === "shadow") return ownBytes(engine.paths.dir);
  const git = (args: string[], input?: Buffer) =>
    runGit(args, { cwd: engine.root, env: { GIT_DIR: engine.location.commonDir }, input });
  // What is missing is left out of the walk: a partial clone's blobs (never fetched by cat-file),
  // and a damaged snapshot's objects, which doctor reports (a size is still worth knowing).
  const objects = (
    await git([
      ...NO_FSMONITOR,
      "rev-list",
      "--objects",
      "--missing=allow-any",
      "--ignore-missing",
      "--no-object-names",
      `--glob=${engine.refs.refPrefix}*`,
      "--not",
      "--exclude=refs/ghostcommit/*",
      "--all",
      "--indexed-objects",
    ])
  ).stdout;
  if (objects.length === 0) return 0;
  const sizes = (await git(["cat-file", "--batch-check=%(objectsize:disk)"], objects)).stdout.toString();
  return sizes.split("\n").reduce((sum, line) => sum + (Number(line) || 0), 0);
}
