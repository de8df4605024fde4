import { takeSnapshot } from "../capture/snapshot.js";
import path from "node:path";
import { commitTree } from "../git/trees.js";
import { GhostcommitError } from "../errors.js";
import { displayPath } from "../paths.js";
import { diffTrees } from "../restore/restore.js";
import { nowMicros } from "../store/metadata.js";
import type { TurnBegun, TurnEnded } from "../types.js";
import { attributeTurn, overlappingTouches } from "./attribution.js";
import { checkTurnId, requireTurn, type SessionContext } from "./context.js";
import { recentJournals } from "./journal.js";
import { applyRecord, openTurnOf, promptPreview, type SessionState, type TurnState } from "./model.js";

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
    if (existing?.state === "open") return { session, turn, before: existing.before };
    if (existing?.state === "done") {
      throw new GhostcommitError(
        "bad-input",
        `turn ${turn} of session ${session} already ran; use a new turn id`,
        {
          session,
          turn,
        },
      );
    }
    const open = openTurnOf(state);
    if (open) await endLocked(ctx, state, open);
    const preview = promptPreview(prompt);
    const snap = await engine.withReader((cat) =>
      takeSnapshot(engine, cat, [...state.touched], {
        kind: "turn-before",
        message: `before turn ${turn}${preview ? `: ${preview}` : ""}`,
        session,
        turn,
      }),
    );
    await journal.append([{ e: "begin", turn, prompt: preview, before: snap.id }]);
    return { session, turn, before: snap.id };
  });
}

/**
 * `turn end`: snapshot after the turn and record the paths it changed. Ending a turn that
 * already ended returns what was recorded (a retried hook); `turn` defaults to the open one.
 */
export async function endTurn(ctx: SessionContext, turn?: string): Promise<TurnEnded> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  const session = journal.session;
  const ended = await journal.locked(async () => {
    const state = await journal.load();
    const record = turn === undefined ? openTurnOf(state) : requireTurn(state, checkTurnId(turn));
    if (!record) {
      throw new GhostcommitError("not-found", `session ${session} has no open turn`, { session });
    }
    if (record.state === "done") {
      return { session, turn: record.turn, after: record.after!, changed: record.changed.map(displayPath) };
    }
    if (record.state === "rewound") {
      throw new GhostcommitError("bad-input", `turn ${record.turn} of session ${session} was rewound`, {
        session,
        turn: record.turn,
      });
    }
    return endLocked(ctx, state, record);
  });
  return ended;
}

/** Ends an open turn; the caller holds the session lock. Updates `state` in place. */
async function endLocked(ctx: SessionContext, state: SessionState, open: TurnState): Promise<TurnEnded> {
  const { engine, journal } = ctx;
  const session = journal.session;
  const { after, diff } = await engine.withReader(async (cat) => {
    const beforeTree = await commitTree(cat, open.before);
    const snap = await takeSnapshot(engine, cat, [...state.touched], {
      kind: "turn-after",
      message: `after turn ${open.turn}`,
      session,
      turn: open.turn,
    });
    return { after: snap, diff: await diffTrees(engine, beforeTree, snap.tree) };
  });
  const now = nowMicros();
  const others = await recentJournals(
    engine.paths.sessionsDir,
    open.startedAt / 1000 - 1000,
    path.basename(journal.file),
  );
  const changed = attributeTurn(
    diff.map((c) => c.path),
    open.touched,
    overlappingTouches(others, open.startedAt, now),
  );
  for (const record of await journal.append([{ e: "end", turn: open.turn, after: after.id, changed }])) {
    applyRecord(state, record);
  }
  return { session, turn: open.turn, after: after.id, changed: changed.map(displayPath) };
}
