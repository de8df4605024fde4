import { takeSnapshot, writeUnpublishedSnapshot } from "../capture/snapshot.js";
import { commitTreeFrom } from "../git/trees.js";
import { GhostcommitError } from "../errors.js";
import { displayPath, type RelPath } from "../paths.js";
import { diffTrees } from "../restore/restore-snapshot.js";
import { leftOutBy, newNonce, nowMicros, type SnapshotMeta } from "../store/metadata.js";
import type { StoreContext } from "../store/context.js";
import type { StoredSnapshot } from "../store/store.js";
import { writeSnapshot } from "../store/snapshots.js";
import { settledWith } from "../util/settled.js";
import type { TurnBegun, TurnEnded } from "../types.js";
import {
  attributeTurn,
  overlappingTouches,
  overlappingTurns,
  overlapStart,
  touchedBesideSince,
} from "./attribution.js";
import { checkTurnId, repeatedBegin, requireTurn, type SessionContext } from "./context.js";
import type { NewRecord } from "./journal.js";
import { journalsAround, registerWorkspace } from "./sessions-around.js";
import { changedAfterOthersEnded, endingDoubts, settledBefore } from "./progress.js";
import { applyRecord, openTurnOf, type SessionState, type TurnState } from "./model.js";
import { promptPreview, humanText } from "../util/format.js";
import { isAbsentMode, type RawChange } from "../git/diff-tree.js";
import { existsNow } from "../util/small-files.js";
import { continuedTurn, foldContinuation, promptSince } from "./continuation.js";
import { unseenBefore } from "./touch.js";
import { releaseMarks } from "./mark-refs.js";
import { snapshotAtLastMark, stopOfSupersedingPrompt } from "./superseded.js";

/**
 * `turn begin`: snapshot before the turn. A still-open turn of the session is ended first
 * (its Stop never came). Beginning the open turn again is a no-op, so a retried hook is harmless.
 */
export async function beginTurn(ctx: SessionContext, turn: string, prompt = ""): Promise<TurnBegun> {
  checkTurnId(turn);
  const { engine, journal } = ctx;
  engine.assertEnabled();
  const session = journal.session;
  return journal.locked(async () => {
    const state = await journal.load();
    const existing = state.turns.filter((t) => t.turn === turn).pop();
    if (existing?.state === "open") return repeatedBegin({ session, turn, before: existing.before });
    if (existing?.state === "done") {
      throw new GhostcommitError(
        "bad-input",
        `turn ${humanText(turn)} of session ${humanText(session)} already ran; use a new turn id`,
        {
          session,
          turn,
        },
      );
    }
    // First, cheap: should this hook be killed in the snapshot (the agent's timeout), the tool
    // calls that follow are known to be a new prompt's, not the previous turn's.
    const unbegunBefore = state.unbegunPrompts ?? 0;
    await journal.append([{ e: "prompt", turn }]);
    const open = openTurnOf(state);
    // Its stop never came (an interrupt): what changed after its last progress mark may be the user's.
    const interrupted = open ? await endLocked(ctx, state, open, { interrupted: true }) : null;
    const superseded = open?.supersededAt !== undefined;
    const preview = promptPreview(prompt);
    const extras = {
      kind: "turn-before" as const,
      message: `before turn ${turn}${preview ? `: ${preview}` : ""}`,
      session,
      turn,
    };
    // The open turn's end just captured the workspace, with the same paths included, while the
    // agent waits for this hook: this turn starts from that state, without a second status.
    const before =
      interrupted && !superseded // a superseded turn ended at its last mark, not at the files now
        ? await snapshotAgain(engine, interrupted.after, extras)
        : (await engine.withReader((cat) => takeSnapshot(engine, cat, [...state.touched], extras))).id;
    await registerWorkspace(engine); // before its turn is recorded: see sessions-around.ts
    await journal.append([{ e: "begin", turn, prompt: preview, before }]);
    return {
      session,
      turn,
      before,
      ...(unbegunBefore > 0 ? { unbegunBefore } : {}),
    };
  });
}

/**
 * `turn end`: snapshot after the turn and record the paths it changed. Ending a turn that
 * already ended returns what was recorded (a retried hook); `turn` defaults to the open one.
 */
export async function endTurn(
  ctx: SessionContext,
  turn?: string,
  options: { everyToolMarked?: boolean } = {},
): Promise<TurnEnded> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  const session = journal.session;
  const ended = await journal.locked(async () => {
    const state = await journal.load();
    const record = turn === undefined ? openTurnOf(state) : requireTurn(state, checkTurnId(turn));
    if (!record) {
      throw new GhostcommitError("not-found", `session ${humanText(session)} has no open turn`, { session });
    }
    if (record.state === "done") {
      return { session, turn: record.turn, after: record.after!, changed: record.changed.map(displayPath) };
    }
    if (record.state === "rewound") {
      const what = `turn ${humanText(record.turn)} of session ${humanText(session)} was rewound`;
      throw new GhostcommitError("bad-input", what, { session, turn: record.turn });
    }
    const { ended } = await endLocked(ctx, state, record, { everyToolMarked: options.everyToolMarked });
    await stopOfSupersedingPrompt(ctx.journal, state, record);
    return ended;
  });
  return ended;
}

/**
 * A stop that follows a blocked stop (`stop_hook_active`): the agent went on working after the
 * latest turn ended, so that turn's end moves here and rewinding it undoes all its work. With an
 * open turn (the first stop was lost), that turn simply ends, unless the agent's retry began it
 * (see `continuedTurn`): then it becomes part of the turn it continues. Null when there is no
 * turn to end.
 */
export async function extendTurn(
  ctx: SessionContext,
  prompt?: string,
  { everyToolMarked }: { everyToolMarked?: boolean } = {},
): Promise<TurnEnded | null> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  const ended = await journal.locked(async () => {
    const state = await journal.load();
    const open = openTurnOf(state);
    const into = open && continuedTurn(state, open, prompt);
    if (open && into) {
      // What the retry touched that the continued turn's before snapshot never looked at (an
      // ignored file): its state when that turn began is unknown, so a rewind leaves it, reported.
      const fresh = [...open.touched].filter((p) => !into.touched.has(p));
      const folds = { turn: open.turn, unknown: await unseenBefore(engine, into, fresh) };
      foldContinuation(state, into, folds); // as the end record's fold will, for its attribution
      return (await endLocked(ctx, state, into, { extend: true, folds, everyToolMarked })).ended;
    }
    if (open) {
      const { ended } = await endLocked(ctx, state, open, { everyToolMarked });
      await stopOfSupersedingPrompt(ctx.journal, state, open);
      return ended;
    }
    const last = state.turns.at(-1);
    if (last?.state !== "done" || last.after === null || promptSince(state, last.endedAt ?? -1)) return null;
    // No tool call since its blocked stop: all it held then was the agent's, what changed since is not.
    if (everyToolMarked && last.endedAt !== undefined) {
      const after = last.after;
      const tree = await engine.withReader((cat) => commitTreeFrom(engine.refs.objectsDir, cat, after));
      last.marks.push({ tree, t: last.endedAt });
      last.progress = tree;
    }
    return (await endLocked(ctx, state, last, { extend: true, everyToolMarked })).ended;
  });
  return ended;
}

/** A new snapshot of the state `of` holds (its tree and what it captured), made now, with other metadata. */
async function snapshotAgain(
  engine: StoreContext,
  of: StoredSnapshot,
  extras: Pick<SnapshotMeta, "kind" | "message" | "session" | "turn">,
): Promise<string> {
  const { guards: _guards, ...captured } = of.meta;
  return writeSnapshot(engine, of.tree, { ...captured, ...extras, t: nowMicros(), nonce: newNonce() });
}

/**
 * Ends a turn; the caller holds the session lock. Updates `state` in place. `interrupted`: no
 * stop event came, so a change made after the turn's last progress mark is uncertain. `extend`:
 * the turn already ended and its end moves (its earlier changes stay its own). Returns what the
 * command answers and the after-snapshot.
 */
async function endLocked(
  ctx: SessionContext,
  state: SessionState,
  turn: TurnState,
  how: {
    interrupted?: boolean;
    extend?: boolean;
    folds?: { turn: string; unknown: RelPath[] };
    everyToolMarked?: boolean;
  } = {},
): Promise<{ ended: TurnEnded; after: StoredSnapshot }> {
  const { engine, journal } = ctx;
  const session = journal.session;
  const { after, beforeTree, diff, sinceProgress, noToolAfterInterrupt, unmarked } = await engine.withReader(
    async (cat) => {
      // Durable before the hook returns: a lost after-snapshot would lose the turn's record. Its
      // flush also writes out the before-snapshot and the journal's earlier records. The diff
      // (reads only) runs meanwhile; the journal records the turn once both are done. The flush is
      // made ready while status runs. The before-tree is read after the capture, so that status
      // starts at once: from its loose commit, or through git where that was packed.
      engine.prepareFlush();
      engine.prepareDiff();
      const extras = {
        kind: "turn-after" as const,
        message: `after turn ${turn.turn}`,
        session,
        turn: turn.turn,
      };
      const { publish, ...snap } =
        (turn.supersededAt !== undefined && (await snapshotAtLastMark(engine, cat, turn, extras))) ||
        (await writeUnpublishedSnapshot(engine, cat, [...state.touched], extras));
      // Unreadable: nothing is published.
      // A before-snapshot dropped and pruned while the turn was open: what the turn changed is
      // unknown (and its rewind went with the snapshot). It ends with nothing attributed to it, as
      // if it started now, so the session's later turns are recorded as ever.
      const beforeTree = await commitTreeFrom(engine.refs.objectsDir, cat, turn.before).catch((error) => {
        if (GhostcommitError.is(error, "store-damaged") && error.data.oid === turn.before) return snap.tree;
        throw error;
      });
      const compared = await settledWith(
        publish(true),
        (async () => {
          const diff = await diffTrees(engine, beforeTree, snap.tree);
          const trees = { before: beforeTree, after: snap.tree };
          return {
            diff,
            ...(await endingDoubts(cat, turn, state, trees, diff, { ...how, root: engine.root })),
          };
        })(),
      );
      return { after: snap, beforeTree, ...compared };
    },
  );
  const now = nowMicros();
  const others = await journalsAround(engine, turn.startedAt, journal.file);
  // The session's own rewinds and redos during the turn (an undo from the chat) are its work too.
  const ownTouched = new Set(turn.touched);
  for (const undo of state.undos) {
    if (undo.t >= turn.startedAt && undo.t <= now) for (const p of undo.paths) ownTouched.add(p);
  }
  const attributed = attributeTurn(
    diff.filter((c) => !leftOutSince(engine.root, after, c)).map((c) => c.path),
    ownTouched,
    overlappingTouches(others, turn.startedAt, now),
  );
  const changed = how.extend ? [...new Set([...turn.changed, ...attributed])].sort() : attributed;
  const uncertain = new Set<RelPath>([
    ...(how.extend ? turn.uncertain : []),
    ...(how.interrupted ? sinceProgress : []),
    ...unmarked,
  ]);
  // While another session's turn ran too, an edit neither reported may be the other agent's: so
  // may a change to a file this turn touched, made after its last tool call (another agent's
  // shell appending to it), and one the other agent's tool edited after this turn's (a progress
  // mark of this turn's shell, taken later, holds those bytes too).
  const overlapFrom = overlapStart(others, turn.startedAt, now);
  if (overlapFrom !== null) {
    // A path first reported only after its edit (Cursor) once another session's turn ran beside
    // this one: what it held just before that edit is unknown, and may be the other agent's work
    // (a rewind would put back this turn's before-state over it), so it is judged as unreported.
    const reportedLate = (p: RelPath) => {
      const times = turn.touchTimes.get(p);
      return times?.afterEdit === true && times.first > overlapFrom;
    };
    const unreported = attributed.filter((p) => !ownTouched.has(p) || reportedLate(p));
    const beside = overlappingTurns(others, turn.startedAt, now);
    for (const p of touchedBesideSince(turn, beside)) uncertain.add(p);
    const own = await engine.withReader(async (cat) => {
      const settled = await settledBefore(cat, turn, overlapFrom, after.tree, unreported);
      const later = unreported.filter((p) => !settled.has(p));
      for (const p of await changedAfterOthersEnded(engine, cat, beside, beforeTree, later)) settled.add(p);
      return settled;
    });
    for (const p of unreported) if (!own.has(p)) uncertain.add(p);
    for (const p of sinceProgress) uncertain.add(p);
  }
  const record: Extract<NewRecord, { e: "end" }> = { e: "end", turn: turn.turn, after: after.id, changed };
  if (uncertain.size > 0) record.uncertain = [...uncertain].filter((p) => changed.includes(p)).sort();
  // After an interrupt, alone: what changed since the last tool call's mark is no call's.
  const sinceInterrupted = overlapFrom === null ? noToolAfterInterrupt : [];
  const afterLastTool = [...(how.extend ? (turn.afterLastTool ?? []) : []), ...unmarked, ...sinceInterrupted];
  if (afterLastTool.length > 0)
    record.afterLastTool = [...new Set(afterLastTool)].filter((p) => changed.includes(p)).sort();
  if (how.extend) record.extend = true;
  if (how.folds) record.folds = how.folds.unknown.length > 0 ? how.folds : { turn: how.folds.turn };
  for (const applied of await journal.append([record], true)) applyRecord(state, applied);
  await releaseMarks(engine, journal.file, turn);
  return { ended: { session, turn: turn.turn, after: after.id, changed: changed.map(displayPath) }, after };
}

/**
 * A path missing from the after-snapshot only because it left it out, though it is still on disk
 * (its directory grew past the large-dir limit, a .ghostignore line came): its state at the turn's
 * end is unknown, not deleted by the turn, so the turn does not claim it (nor a rewind undo it).
 */
function leftOutSince(root: string, after: StoredSnapshot, change: RawChange): boolean {
  if (!isAbsentMode(change.newMode)) return false;
  return leftOutBy(after.meta, change.path) && existsNow(root, change.path);
}
