import { LooseObjectWriter } from "../git/loose-objects.js";
import { EMPTY_TREE, serializeCommit, serializeTree } from "../git/objects.js";
import type { StoreContext } from "../store/context.js";
import { remoteNamespace } from "../store/remote.js";
import type { StoredSnapshot } from "../store/store.js";
import { randomHex } from "../util/crypto.js";
import { remoteSnapshotRef } from "./remote-sessions.js";

/**
 * Snapshot commits have no parents, and git leaves out of a pack only what the trees of the sent
 * commits' parents already hold (for a fetch, the parents the other side has): without help
 * every push and every fetch carried each new snapshot's whole tree, though the other side held
 * all of it but one file. Two kinds of commit (an empty tree, never read for content) give git
 * those parents:
 *
 * - a push's carrier: its parents are the new tips and a few commits the remote has and this
 *   store can read (its newest snapshots of this workspace, its branch heads), so the push sends
 *   only what their trees lack. Its ref lives only as long as the push (`carrierRefs` finds any
 *   left behind);
 * - a snapshot's link, kept on the remote beside the snapshot (`links/<id>`): its parents are the
 *   snapshot and the newest snapshot of this workspace the remote had before, or, where it had
 *   none, the branch head the snapshot was taken on (the remote's HEAD if that is not one of its
 *   branches). A fetch asks for links too, so a machine that has that commit receives only what it
 *   lacks. A link to a branch head keeps that commit's history on the remote while it is there.
 */
export interface PushCarrier {
  oid: string;
  ref: string;
}

/** How many commits the remote has serve as the carrier's edges. */
const EDGE_SNAPSHOTS = 4;
const EDGE_BRANCHES = 4;

export async function writePushCarrier(
  engine: StoreContext,
  tips: string[],
  remoteRefs: Map<string, string>,
  readable: Set<string>,
  snapshots: StoredSnapshot[],
): Promise<PushCarrier | null> {
  const onRemote = newestOnRemote(engine, remoteRefs, readable, snapshots, EDGE_SNAPSHOTS);
  const branches = branchHeads(remoteRefs, readable);
  const edges = [...new Set([...onRemote, ...branches])].slice(0, EDGE_SNAPSHOTS + EDGE_BRANCHES);
  const sent = new Set(tips);
  const parents = [...tips, ...edges.filter((oid) => !sent.has(oid))];
  if (parents.length === tips.length) return null; // a first push to an empty remote: no edge
  const writer = new LooseObjectWriter(engine.refs.objectsDir);
  // Git reads the empty tree without it being stored, but a pack must carry it.
  await writer.write("tree", serializeTree([]));
  const oid = await writer.write(
    "commit",
    serializeCommit({
      tree: EMPTY_TREE,
      parents,
      time: Math.floor(Date.now() / 1000),
      message: "ghostcommit push carrier\n",
    }),
  );
  return { oid, ref: `${carrierPrefix(engine)}${randomHex(8)}` };
}

/** Link commits for `sending` (`[link, ref]` pairs); none when the remote has no snapshot here yet. */
export async function writeSnapshotLinks(
  engine: StoreContext,
  sending: StoredSnapshot[],
  remoteRefs: Map<string, string>,
  readable: Set<string>,
  snapshots: StoredSnapshot[],
): Promise<[string, string][]> {
  const [newest] = newestOnRemote(engine, remoteRefs, readable, snapshots, 1);
  // A new machine's first push (a cloud sandbox) has no snapshot of the remote's to name: the
  // branch head the snapshot was taken on (or the remote's HEAD) serves, which the fetching
  // machine has from its clone.
  const heads = branchHeads(remoteRefs, readable);
  const edgeOf = (snapshot: StoredSnapshot) =>
    newest ??
    (snapshot.meta.parent && heads.includes(snapshot.meta.parent) ? snapshot.meta.parent : heads[0]);
  if (sending.length === 0) return [];
  const writer = new LooseObjectWriter(engine.refs.objectsDir);
  await writer.write("tree", serializeTree([]));
  const links: [string, string][] = [];
  for (const snapshot of sending) {
    const edge = edgeOf(snapshot);
    if (edge === undefined || edge === snapshot.id) continue;
    const oid = await writer.write(
      "commit",
      serializeCommit({
        tree: EMPTY_TREE,
        parents: [snapshot.id, edge],
        time: Math.floor(snapshot.meta.t / 1e6),
        message: "ghostcommit snapshot link\n",
      }),
    );
    links.push([oid, `${remoteNamespace(engine.location)}links/${snapshot.id}`]);
  }
  return links;
}

/** The remote's carrier refs of this workspace (one left by an interrupted push is removed next time). */
export function carrierRefs(engine: StoreContext, remoteRefs: Map<string, string>): string[] {
  const prefix = carrierPrefix(engine);
  return [...remoteRefs.keys()].filter((name) => name.startsWith(prefix));
}

function carrierPrefix(engine: StoreContext): string {
  return `${remoteNamespace(engine.location)}carriers/`;
}

/** The newest snapshots of this workspace the remote has (and this store can read). */
function newestOnRemote(
  engine: StoreContext,
  remoteRefs: Map<string, string>,
  readable: Set<string>,
  snapshots: StoredSnapshot[],
  count: number,
): string[] {
  return snapshots
    .filter((s) => remoteRefs.get(remoteSnapshotRef(engine, s.id)) === s.id && readable.has(s.id))
    .sort((a, b) => b.meta.t - a.meta.t)
    .slice(0, count)
    .map((s) => s.id);
}

/** The remote's HEAD and branch heads this store can read, HEAD first. */
function branchHeads(remoteRefs: Map<string, string>, readable: Set<string>): string[] {
  const heads = [...remoteRefs]
    .filter(([name, oid]) => (name === "HEAD" || name.startsWith("refs/heads/")) && readable.has(oid))
    .sort(([a], [b]) => (a === "HEAD" ? -1 : b === "HEAD" ? 1 : 0))
    .map(([, oid]) => oid);
  return [...new Set(heads)];
}
