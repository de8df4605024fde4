import { readLastSafety } from "../store/last-safety.js";
import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { GhostcommitError } from "../errors.js";
import { runGit } from "../git/exec.js";
import { STORE_FILES } from "../store/layout.js";
import type { StoredSnapshot } from "../store/store.js";
import { heldByLive, liveSharedHolders, waitForSharedHolders, withLock } from "../util/lock.js";
import { staleGitLocks } from "./store-check.js";
import { ownBytes } from "./disk.js";
import { dropFreesAnything, forgetPrunedIds } from "./freeable.js";
import { removeFetchedLinks } from "../store/fetched-links.js";
import { damagedObjectsFailure } from "./damaged-objects.js";
import { deadPackTemps, removePackTemps, removingTempPackOnFailure } from "../store/pack-temps.js";
import { linkBorrowed } from "../store/snapshots.js";
import { sameFile } from "../store/borrowed-packs.js";
import { promisedObjectsArgs } from "../store/promisor.js";
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

/** Refs that make protected trees reachable while gc packs, removed after it (or by the next gc). */
const KEEP_REFS = "refs/ghostcommit-gc-keep/";

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
        await engine.refs.remove(batch.map((s) => s.id));
        for (const s of batch) drop.add(s.id);
        if (engine.refs.kind === "shadow") await pack(engine, writerWaitMs, trees);
        const after = await measure();
        perSnapshot = (size - after) / batch.length;
        // Freed nothing after all (objects a running writer still guards): no more rounds.
        if (after >= size && after > policy.maxBytes) {
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

async function pack(engine: StoreContext, writerWaitMs: number, keepTrees: string[]): Promise<void> {
  // The plain-directory index names blobs the next snapshot reuses without rewriting them:
  // repack and prune count what it names as reachable (GIT_INDEX_FILE), so gc never leaves
  // it pointing at pruned objects (which would fail every later snapshot).
  const env = { ...engine.readEnv, GIT_INDEX_FILE: path.join(engine.paths.dir, STORE_FILES.plainIndex) };
  // Blobs a partial clone of yours never fetched are left out, not a failure (see promisor.ts).
  const promised = promisedObjectsArgs(engine);
  const git = (args: string[], input?: string) =>
    runGit([...promised, ...args], { cwd: engine.paths.dir, env, input });
  // Writers that began before gc took its lock finish first: repack and prune see their refs.
  const quiet = await waitForSharedHolders(path.join(engine.paths.dir, STORE_FILES.writersDir), writerWaitMs);
  await releaseOrphanedPacks(engine);
  // A fetch cut off before it removed its temporary link refs left them holding snapshots this
  // gc may drop; none is running now (fetches write under the same lock).
  if (quiet) await removeFetchedLinks(engine);
  if (quiet) await forgetOutdatedPlainIndex(engine);
  // The protected trees are tips for repack and prune only while they run; a gc cut off leaves
  // its refs to the next, which replaces them.
  const stale = (await git(["for-each-ref", "--format=%(refname)", KEEP_REFS])).stdout
    .toString()
    .split("\n")
    .filter(Boolean);
  const keepRefs = [...new Set(keepTrees)].map((tree) => `${KEEP_REFS}${tree}`);
  const setRefs = [
    ...stale.filter((ref) => !keepRefs.includes(ref)).map((ref) => `delete ${ref}\n`),
    ...keepRefs.map((ref) => `update ${ref} ${ref.slice(KEEP_REFS.length)}\n`),
  ];
  if (setRefs.length > 0) await git(["update-ref", "--stdin"], setRefs.join(""));
  await git(["pack-refs", "--all", "--prune"]);
  // -l: objects the user's repository holds stay borrowed; .keep packs (linked) are left alone.
  // With a writer still running, its objects may sit unreferenced in a pack it wrote: -A turns
  // a pack's unreachable objects loose (dated as their pack, which writers touch) for the
  // prune below to spare, where -a would drop them.
  const unreachable = quiet ? ["-a"] : ["-A", "--unpack-unreachable=10.minutes.ago"];
  // What an earlier gc's or fetch's git left when it died (a reboot mid-repack leaves a pack as
  // large as the store): this one holds the gc lock, so only a fetch may be writing, and it is checked.
  await removePackTemps(await deadPackTemps(engine, { gc: true }));
  const prune = () => git(["prune", quiet ? "--expire=now" : "--expire=10.minutes.ago"]);
  await removingTempPackOnFailure(
    engine,
    { gc: true },
    git(["repack", ...unreachable, "-d", "-l", "-q", "--no-write-bitmap-index"]),
  ).catch(async (error: unknown) => {
    // No room for a new pack (the store filled its own disk): pruning writes nothing, and frees
    // the loose objects no snapshot needs, large files' among them, so the next gc can pack.
    const full = GhostcommitError.is(error, "io") && error.data.errno === "ENOSPC";
    if (full)
      await prune()
        .then(() => forgetPrunedIds(engine))
        .catch(() => {}); // reported: the repack's
    throw damagedObjectsFailure(error) ?? error;
  });
  await prune();
  if (keepRefs.length > 0)
    await git(["update-ref", "--stdin"], keepRefs.map((ref) => `delete ${ref}\n`).join(""));
  // Repack -l left out, and its prune-packed removed, the store's links to every object the user's
  // repository also holds (in a pack of its own now, after its gc): until they are linked
  // again, the user's next `git gc --prune=now` could take what a snapshot needs. So all are
  // relinked now, from scratch.
  await forgetPrunedIds(engine);
  await linkBorrowed(engine);
}

/**
 * A linked pack whose original the user's git has deleted, or rewritten under the same name (its
 * `git gc` on unchanged content: same checksum, new file), is ours alone now: drop its .keep so
 * repack keeps only what snapshots need from it (nothing the user's repository holds: -l) and frees
 * the rest. Judged by the file (device and inode), not the name.
 */
async function releaseOrphanedPacks(engine: StoreContext): Promise<void> {
  if (!engine.location.commonDir) return;
  const ours = path.join(engine.paths.objectsDir, "pack");
  const theirs = path.join(engine.location.commonDir, "objects", "pack");
  for (const name of await fs.readdir(ours).catch(() => [] as string[])) {
    if (!name.endsWith(".keep")) continue;
    const pack = name.replace(/\.keep$/, ".pack");
    if (!sameFile(path.join(ours, pack), path.join(theirs, pack))) {
      await fs.rm(path.join(ours, name), { force: true });
    }
  }
}

/**
 * A plain directory's index names the content of its files as the last snapshot found them, and
 * repack keeps what it names: a file deleted or changed since (a secret removed, then the
 * snapshots holding it dropped) would keep its old content in the store. Those entries leave
 * the index; the rest keep their stat data, so the next snapshot reads only the files that left
 * (forgetting the whole index made it read every file again, a first snapshot's cost). Their
 * removal changes the index's tree, so that snapshot writes the index rather than edit the old tree.
 */
async function forgetOutdatedPlainIndex(engine: StoreContext): Promise<void> {
  const indexFile = path.join(engine.paths.dir, STORE_FILES.plainIndex);
  if (engine.location.kind !== "plain" || !existsSync(indexFile)) return;
  await withLock(path.join(engine.paths.dir, STORE_FILES.plainIndexLock), async () => {
    const env = { ...engine.readEnv, GIT_WORK_TREE: engine.root, GIT_INDEX_FILE: indexFile };
    const listed = await runGit([...NO_FSMONITOR, "ls-files", "-z", "--modified"], {
      cwd: engine.paths.dir,
      env,
      okCodes: [0, 128],
    });
    if (listed.code === 0 && listed.stdout.length === 0) return;
    const removed =
      listed.code === 0 &&
      (
        await runGit(
          // As a snapshot writes it: the end-of-entries mark its readers use; git's untracked
          // cache goes (the store's config), and the next status builds it again.
          ["-c", "index.recordEndOfIndexEntries=true", "update-index", "-z", "--force-remove", "--stdin"],
          { cwd: engine.paths.dir, env, input: listed.stdout, okCodes: [0, 128] },
        )
      ).code === 0;
    if (removed) return;
    // An index git cannot read or write: forgotten whole, as doctor's repair does.
    await fs.rm(indexFile, { force: true });
    await fs.rm(path.join(engine.paths.dir, STORE_FILES.plainState), { force: true });
  });
}
