import type { Engine } from "../engine.js";
import { GhostcommitError } from "../errors.js";
import type { CatFile } from "../git/cat-file.js";
import { LooseObjectWriter, serializeCommit } from "../git/objects.js";
import { decodeMessage, encodeMessage, type SnapshotMeta } from "../store/metadata.js";
import type { StoredSnapshot } from "../store/store.js";

/**
 * Reads one snapshot straight from its commit object: no ref listing, so the cost does not grow
 * with the number of snapshots in the store. Null when the object is gone (expired by gc).
 */
export async function readSnapshot(cat: CatFile, id: string): Promise<StoredSnapshot | null> {
  const object = await cat.read(id);
  if (object?.type !== "commit") return null;
  const body = object.content.toString("utf8");
  const tree = /^tree ([0-9a-f]{40})/.exec(body)?.[1];
  const split = body.indexOf("\n\n");
  const meta = split === -1 ? null : decodeMessage(body.slice(split + 2));
  return tree && meta ? { id, tree, meta } : null;
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
): Promise<StoredSnapshot> {
  const snapshot = listed && !listed.has(id) ? null : await readSnapshot(cat, id);
  if (!snapshot) {
    throw new GhostcommitError(
      "not-found",
      `the snapshot ${what} (${id.slice(0, 12)}) is gone (expired or dropped)`,
      { id },
    );
  }
  return snapshot;
}

/** Commits a tree with the given metadata and makes it reachable, like Engine.snapshot does. */
export async function writeSnapshot(engine: Engine, tree: string, meta: SnapshotMeta): Promise<string> {
  const writer = new LooseObjectWriter(engine.refs.objectsDir);
  const parents = engine.refs.kind === "repo" && meta.parent ? [meta.parent] : [];
  const body = serializeCommit({
    tree,
    parents,
    time: Math.floor(meta.t / 1e6),
    message: encodeMessage(meta),
  });
  const id = await writer.write("commit", body);
  await engine.refs.add(id);
  return id;
}
