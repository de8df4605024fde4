import type { CatFile } from "../git/cat-file.js";
import { BatchingObjectWriter } from "../git/batched-objects.js";
import type { RelPath } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import { newNonce, nowMicros, type SnapshotMeta } from "../store/metadata.js";
import { cleanLeftovers } from "../store/restore-journal.js";
import type { StoredSnapshot } from "../store/store.js";
import { linkBorrowedAhead, publishSnapshot, writeSnapshotCommit } from "../store/snapshots.js";
import { retakenIfPruned } from "../store/prune-guard.js";
import type { CaptureContext, Captured } from "./context.js";
import { captureGit } from "./git-capture.js";
import { discardStatusAhead } from "./status-ahead.js";
import { HashCache } from "./hash-cache.js";
import { capturePlain } from "./plain-capture.js";
import { prepareStatusCacheBuild, startStatusCacheBuild } from "./status-cache.js";
import { ObjectCache } from "../git/object-cache.js";
import { STORE_FILES, writeFileAtomic } from "../store/layout.js";
import path from "node:path";
import { trace } from "../util/trace.js";

/** Extra facts recorded with a snapshot. */
export interface SnapshotExtras {
  kind?: SnapshotMeta["kind"];
  message?: string;
  session?: string;
  turn?: string;
  guards?: string;
}

/** Captures the workspace as a tree (no commit, no ref). */
export async function captureTree(store: StoreContext, cat: CatFile, includes: RelPath[]): Promise<Captured> {
  // A restore killed half-way may have left temp files in the workspace: remove them before
  // they could be captured (only those of dead processes; cheap when there are none).
  const leftovers = await cleanLeftovers(store.paths, store.root, store.refs.objectsDir);
  if (leftovers.interrupted.length > 0) discardStatusAhead("a dead restore's temp files removed");
  const cache = new HashCache(store.paths.dir);
  await cache.load();
  const objectsFile = path.join(store.paths.dir, STORE_FILES.objectCache);
  const objects = new ObjectCache(objectsFile);
  cat.useCache(objects);
  // A capture's objects are held and written at its end, as one pack when they are many (or,
  // in a private store, more than a few). Nothing in a capture hands them to git before that:
  // git reads only the user's objects and, in a plain directory, blobs it wrote itself.
  const batching = new BatchingObjectWriter(store.refs.objectsDir, store.refs.kind === "shadow");
  const ctx: CaptureContext = {
    location: store.location,
    paths: store.paths,
    settings: store.settings,
    writer: batching,
    cat,
    cache,
    readEnv: store.readEnv,
    prepareStatusBuild: () =>
      prepareStatusCacheBuild(store.paths.dir, store.root, store.refs.kind, store.paths.logFile),
  };
  let captured: Captured;
  try {
    captured =
      store.location.kind === "git" ? await captureGit(ctx, includes) : await capturePlain(ctx, includes);
    batching.flush();
    trace("capture: objects written");
  } finally {
    cat.useCache(null);
  }
  await cache.save().catch(() => {});
  const kept = objects.serialize();
  if (kept) await writeFileAtomic(objectsFile, kept, 0o600, false).catch(() => {}); // a cache
  return { ...captured, written: batching.written };
}

/**
 * Takes a snapshot: capture, then commit it and make it reachable. `durable`: it survives a
 * machine crash once this returns (a restore's way back, a turn's record).
 */
export async function takeSnapshot(
  store: StoreContext,
  cat: CatFile,
  includes: RelPath[],
  extras: SnapshotExtras = {},
  durable = false,
): Promise<StoredSnapshot> {
  // A prune of the user's that took what a capture wrote: the next capture writes it again.
  return retakenIfPruned(
    async () => {
      const { publish, ...snapshot } = await writeUnpublishedSnapshot(store, cat, includes, extras);
      await publish(durable);
      return snapshot;
    },
    () => trace("snapshot: objects pruned beside it, taken again"),
  );
}

/** A snapshot whose commit is written but not yet reachable: `publish` adds its ref. */
export interface UnpublishedSnapshot extends StoredSnapshot {
  publish: (durable: boolean) => Promise<void>;
}

/**
 * Captures and writes a snapshot's commit, leaving its ref to `publish`: a caller may do
 * read-only work (a restore's plan) while the flush to disk runs.
 */
export async function writeUnpublishedSnapshot(
  store: StoreContext,
  cat: CatFile,
  includes: RelPath[],
  extras: SnapshotExtras = {},
): Promise<UnpublishedSnapshot> {
  store.assertEnabled();
  const linkedAhead = linkBorrowedAhead(store);
  const captured = await captureTree(store, cat, includes);
  const meta: SnapshotMeta = {
    v: 1,
    t: nowMicros(),
    kind: extras.kind ?? "snapshot",
    message: extras.message ?? "snapshot",
    parent: captured.parent,
    fileCount: captured.fileCount,
    excluded: captured.excluded,
    included: captured.included,
    nonce: newNonce(),
  };
  if (captured.nested) meta.nested = captured.nested;
  if (captured.outside) meta.outside = captured.outside;
  if (extras.session !== undefined) meta.session = extras.session;
  if (extras.turn !== undefined) meta.turn = extras.turn;
  if (extras.guards !== undefined) meta.guards = extras.guards;
  const id = await writeSnapshotCommit(store, captured.tree, meta, { linkBorrowed: true, linkedAhead });
  const written = captured.written ?? { loose: [], packs: [] };
  const publish = async (durable: boolean) => {
    await publishSnapshot(store, id, durable, { loose: [...written.loose, id], packs: written.packs });
    // Only now: the detached build's start-up would compete with this snapshot for the CPU (a
    // process already waiting for this one's end goes ahead once it ends).
    if (captured.statusCopyDeferred) {
      const { paths } = store;
      await startStatusCacheBuild(
        paths.dir,
        store.root,
        store.refs.kind,
        paths.logFile,
        captured.statusCopyDeferred,
      ).catch(() => {});
    }
  };
  return { id, tree: captured.tree, meta, publish };
}
