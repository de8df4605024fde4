import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { NO_FSMONITOR, runGit } from "../git/exec.js";
import { STORE_FILES } from "../store/layout.js";
import { waitForSharedHolders, withLock } from "../util/lock.js";
import { forgetPrunedIds, outOfRoom } from "./freeable.js";
import { removeFetchedLinks } from "../store/fetched-links.js";
import { damagedObjectsFailure } from "./damaged-objects.js";
import { deadPackTemps, removePackTemps, removingTempPackOnFailure } from "../store/pack-temps.js";
import { linkBorrowed } from "../store/snapshots.js";
import { sameFile } from "../store/borrowed-packs.js";
import { promisedObjectsArgs } from "../store/promisor.js";

/** Refs that make protected trees reachable while gc packs, removed after it (or by the next gc). */
const KEEP_REFS = "refs/ghostcommit-gc-keep/";

/**
 * Packs the shadow store (gc holds its lock): what no snapshot, protected tree or plain index
 * reaches goes; see collectGarbage.
 */
export async function pack(engine: StoreContext, writerWaitMs: number, keepTrees: string[]): Promise<void> {
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
  const prune = () => git(["prune", quiet ? "--expire=now" : "--expire=10.minutes.ago"]);
  const keepRefs = [...new Set(keepTrees)].map((tree) => `${KEEP_REFS}${tree}`);
  // A prune may run once the protected trees are refs (or there are none).
  let treesKept = keepRefs.length === 0;
  try {
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
    const setRefs = [
      ...stale.filter((ref) => !keepRefs.includes(ref)).map((ref) => `delete ${ref}\n`),
      ...keepRefs.map((ref) => `update ${ref} ${ref.slice(KEEP_REFS.length)}\n`),
    ];
    if (setRefs.length > 0) await git(["update-ref", "--stdin"], setRefs.join(""));
    treesKept = true;
    await git(["pack-refs", "--all", "--prune"]);
    // -l: objects the user's repository holds stay borrowed; .keep packs (linked) are left alone.
    // With a writer still running, its objects may sit unreferenced in a pack it wrote: -A turns
    // a pack's unreachable objects loose (dated as their pack, which writers touch) for the
    // prune below to spare, where -a would drop them.
    const unreachable = quiet ? ["-a"] : ["-A", "--unpack-unreachable=10.minutes.ago"];
    // What an earlier gc's or fetch's git left when it died (a reboot mid-repack leaves a pack as
    // large as the store): this one holds the gc lock, so only a fetch may be writing, and it is checked.
    await removePackTemps(await deadPackTemps(engine, { gc: true }));
    await removingTempPackOnFailure(
      engine,
      { gc: true },
      git(["repack", ...unreachable, "-d", "-l", "-q", "--no-write-bitmap-index"]),
    );
  } catch (error) {
    // No room for a ref, an index or a new pack (the store filled its own disk): a prune writes
    // nothing, and frees the loose objects no snapshot needs (large files'), so the next gc can pack.
    if (treesKept && outOfRoom(error))
      await prune().then(
        () => forgetPrunedIds(engine),
        () => {},
      );
    throw damagedObjectsFailure(error) ?? error;
  }
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
