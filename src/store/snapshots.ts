import path from "node:path";
import { linkBorrowedObjects } from "./borrow.js";
import type { StoreContext } from "./context.js";
import { whenGitRuns } from "../util/detached.js";
import { trace } from "../util/trace.js";
import { GhostcommitError } from "../errors.js";
import type { CatFile } from "../git/cat-file.js";
import { serializeCommit } from "../git/objects.js";
import { LooseObjectWriter } from "../git/loose-objects.js";
import type { WrittenObjects } from "../git/objects.js";
import { missingAfterGc, prunedError, retakenIfPruned } from "./prune-guard.js";
import { encodeMessage, isoFromMicros, type SnapshotMeta, type StoredExclusion } from "./metadata.js";
import { displayPath } from "../paths.js";
import type { Excluded, Snapshot, SnapshotSummary } from "../types.js";
import { snapshotOfCommit } from "./ref-files.js";
import type { SnapshotRefs, StoredSnapshot } from "./store.js";
import { forgetLastSafety } from "./last-safety.js";

/**
 * Reads one snapshot straight from its commit object: no ref listing, so the cost does not grow
 * with the number of snapshots in the store. Null when the object is gone (expired by gc).
 */
export async function readSnapshot(cat: CatFile, id: string): Promise<StoredSnapshot | null> {
  const object = await cat.read(id);
  if (object?.type !== "commit") return null;
  return snapshotOfCommit(id, object.content.toString("utf8"));
}

/**
 * Like readSnapshot, but a missing snapshot is an error naming what needed it. With `listed`
 * (the ids the store lists), a snapshot that was dropped or expired counts as missing even while
 * its objects wait to be pruned.
 */
export async function requireSnapshot(
  cat: CatFile,
  id: string,
  what: string,
  listed?: ReadonlySet<string>,
  store?: Pick<SnapshotRefs, "kind" | "otherStoreHolding" | "optionNames">,
): Promise<StoredSnapshot> {
  const snapshot = listed && !listed.has(id) ? null : await readSnapshot(cat, id);
  if (!snapshot) {
    const other = await store?.otherStoreHolding(id);
    // Kept by the workspace's other store (its `store` setting changed between turns): the shadow
    // store reads the repository's objects, so a snapshot of the repo store is readable here.
    const across = other ? await readSnapshot(cat, id) : null;
    if (across) return across;
    const why = other
      ? `is in this workspace's ${other} store, and it now uses the ${store?.kind} store (\`${store?.optionNames.store(other)}\` reaches it)`
      : "is gone (expired or dropped)";
    throw new GhostcommitError("not-found", `the snapshot ${what} (${id.slice(0, 12)}) ${why}`, { id });
  }
  return snapshot;
}

/**
 * Commits a tree with the given metadata and makes it reachable: the one place a snapshot commit
 * is written. With `linkBorrowed`, objects borrowed from the user's repository are hard-linked
 * into the shadow store first, so the snapshot survives the user's gc (needed after a capture,
 * which may reference user objects the store has never seen). With `durable`, everything the
 * snapshot needs is flushed to disk before its ref is written, and the ref after: a machine crash
 * can then neither lose it nor leave its ref without its objects.
 */
export async function writeSnapshot(
  store: StoreContext,
  tree: string,
  meta: SnapshotMeta,
  options: { linkBorrowed?: boolean; durable?: boolean } = {},
): Promise<string> {
  // A prune of the user's that took the commit just written: written again, it is kept.
  return retakenIfPruned(async () => {
    const id = await writeSnapshotCommit(store, tree, meta, options);
    await publishSnapshot(store, id, options.durable ?? false, { loose: [id], packs: [] });
    return id;
  });
}

/**
 * Starts linking what a capture may borrow from the user's repository once the capture's status
 * runs (see `whenGitRuns`), where the links cost the command nothing: the main thread waits on git.
 * They cover every object the user's repository holds loose by then, so those the snapshot
 * borrows (named by the index status reads, or HEAD) are among them, but for one made loose just
 * as status started. `writeSnapshotCommit` waits for them, then links what is new since.
 */
export function linkBorrowedAhead(store: StoreContext): { linked: Promise<void> | null } {
  const ahead: { linked: Promise<void> | null } = { linked: null };
  if (store.refs.kind !== "shadow" || !store.location.commonDir) return ahead;
  whenGitRuns(() => {
    ahead.linked = linkBorrowed(store);
    ahead.linked.catch(() => {}); // awaited with the commit
  });
  return ahead;
}

/**
 * Hard-links into a shadow store the user's object files it may borrow from (see
 * `linkBorrowedObjects`): after a snapshot, a fetch, and a gc (whose repack left out and
 * pruned the store's copies of whatever the user's repository also holds).
 */
export async function linkBorrowed(store: StoreContext): Promise<void> {
  if (store.refs.kind !== "shadow" || !store.location.commonDir) return;
  await linkBorrowedObjects(
    store.paths.dir,
    store.paths.objectsDir,
    path.join(store.location.commonDir, "objects"),
  );
}

/** Writes a snapshot's commit (and links what it borrows); no ref yet, so nothing lists it. */
export async function writeSnapshotCommit(
  store: StoreContext,
  tree: string,
  meta: SnapshotMeta,
  options: { linkBorrowed?: boolean; linkedAhead?: { linked: Promise<void> | null } } = {},
): Promise<string> {
  const writer = new LooseObjectWriter(store.refs.objectsDir);
  const parents = store.refs.kind === "repo" && meta.parent ? [meta.parent] : [];
  const body = serializeCommit({
    tree,
    parents,
    time: Math.floor(meta.t / 1e6),
    message: encodeMessage(meta),
  });
  const id = await writer.write("commit", body);
  trace("snapshot: commit written");
  if (options.linkBorrowed && store.refs.kind === "shadow" && store.location.commonDir) {
    // Linked ahead while status ran: what became loose since (a `git add` racing status, whose
    // index status may have read) is linked now. The pass looks only into the fan-out
    // directories changed since, by their times.
    if (options.linkedAhead?.linked) await options.linkedAhead.linked;
    await linkBorrowed(store);
    trace("snapshot: borrowed objects linked");
  }
  return id;
}

/**
 * Makes a written snapshot reachable (its ref). `durable`: flushed to disk first, so once this
 * returns the snapshot survives a machine crash.
 */
export async function publishSnapshot(
  store: StoreContext,
  id: string,
  durable: boolean,
  written: WrittenObjects,
): Promise<void> {
  if (durable) {
    await store.flushToDisk();
    trace("snapshot: flushed to disk");
  }
  const { commonDir } = store.location;
  if (store.refs.kind !== "repo" || !commonDir) {
    await store.refs.add(id, durable);
    trace("snapshot: ref created");
    return;
  }
  // In the user's repository, a prune of theirs may take the objects before the ref protects them.
  const missing = () => missingAfterGc(commonDir, store.refs.objectsDir, written, Date.now());
  try {
    await store.refs.add(id, durable);
  } catch (error) {
    const gone = await missing().catch(() => []);
    throw gone.length > 0 ? prunedError(gone[0]) : error;
  }
  trace("snapshot: ref created");
  const gone = await missing();
  if (gone.length > 0) {
    // Never left naming missing objects: the user's own gc and for-each-ref would fail on it.
    await store.refs.remove([id]);
    throw prunedError(gone[0]);
  }
  trace("snapshot: objects checked");
}

/** The library's views of a stored snapshot: display paths and ISO times. */
/**
 * Forgets snapshots by hand: dropping the latest restore's safety snapshot is a choice, so
 * last-safety.json stops naming it (doctor reports a safety snapshot lost any other way).
 */
export async function dropSnapshots(store: StoreContext, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  await store.refs.remove(unique);
  await forgetLastSafety(store, unique);
  return unique;
}

export function toExcluded(entries: StoredExclusion[]): Excluded[] {
  return entries.map((e) => ({ ...e, path: displayPath(e.path) }));
}

export function toSummary(s: StoredSnapshot): SnapshotSummary {
  const summary: SnapshotSummary = {
    id: s.id,
    createdAt: isoFromMicros(s.meta.t),
    message: s.meta.message,
    kind: s.meta.kind,
  };
  if (s.meta.session !== undefined) summary.session = s.meta.session;
  if (s.meta.turn !== undefined) summary.turn = s.meta.turn;
  return summary;
}

export function toSnapshot(s: StoredSnapshot): Snapshot {
  return {
    ...toSummary(s),
    parent: s.meta.parent,
    fileCount: s.meta.fileCount,
    excluded: toExcluded(s.meta.excluded),
  };
}
