import type { UnpublishedSnapshot } from "../capture/snapshot.js";
import type { CatFile } from "../git/cat-file.js";
import { isAbsentMode } from "../git/diff-tree.js";
import { diffTrees } from "../restore/restore-snapshot.js";
import type { StoreContext } from "../store/context.js";
import { newNonce, nowMicros, type SnapshotMeta } from "../store/metadata.js";
import { publishSnapshot, readSnapshot, writeSnapshotCommit } from "../store/snapshots.js";
import type { Journal } from "./journal.js";
import type { SessionState, TurnState } from "./model.js";

/**
 * The end of a turn a new prompt superseded while it was open (see `promptArrived`): the workspace
 * as its last progress mark held it (as it began, without one), not as it is now, since the
 * prompt that came after it has been working since. Its metadata is the turn's before-snapshot's,
 * with the files the mark added or removed counted. Null when the before-snapshot is gone (the
 * turn then ends as any other).
 */
export async function snapshotAtLastMark(
  engine: StoreContext,
  cat: CatFile,
  turn: TurnState,
  extras: Pick<SnapshotMeta, "kind" | "message" | "session" | "turn">,
): Promise<UnpublishedSnapshot | null> {
  const before = await readSnapshot(cat, turn.before).catch(() => null);
  if (!before) return null;
  const tree = turn.progress ?? before.tree;
  let fileCount = before.meta.fileCount;
  for (const change of await diffTrees(engine, before.tree, tree)) {
    if (isAbsentMode(change.oldMode)) fileCount++;
    else if (isAbsentMode(change.newMode)) fileCount--;
  }
  const { guards: _guards, ...captured } = before.meta;
  const meta: SnapshotMeta = { ...captured, ...extras, fileCount, t: nowMicros(), nonce: newNonce() };
  const id = await writeSnapshotCommit(engine, tree, meta);
  const publish = (durable: boolean) => publishSnapshot(engine, id, durable, { loose: [id], packs: [] });
  return { id, tree, meta, publish };
}

/**
 * A stop that ended a turn a new prompt had superseded is that prompt's stop: the prompt, whose
 * turn never began, runs no more either (see `promptArrived`). `state` is after the turn's end.
 */
export async function stopOfSupersedingPrompt(
  journal: Journal,
  state: SessionState,
  ended: TurnState,
): Promise<void> {
  const prompt = state.unbegun;
  if (ended.supersededAt === undefined || !prompt || prompt.abandonedAt !== undefined) return;
  await journal.append([{ e: "abandon", turn: prompt.turn }]);
}
