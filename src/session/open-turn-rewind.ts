import { GhostcommitError } from "../errors.js";
import type { CatFile } from "../git/cat-file.js";
import type { RelPath } from "../paths.js";
import { diffTrees } from "../restore/restore-snapshot.js";
import { nowMicros } from "../store/metadata.js";
import { attributeTurn, overlappingTouches } from "./attribution.js";
import type { SessionContext } from "./context.js";
import type { SessionState, TurnState } from "./model.js";
import { humanText } from "../util/format.js";
import { interruptedDoubts } from "./progress.js";
import { journalsAround } from "./sessions-around.js";

/**
 * What a rewind that closes the open turn (forced, or a turn whose conversation ended) takes as
 * its work: what differs from its before-state now, and of that, what is in doubt as after an
 * interrupt (no end event came: a change since its last mark may be the person's). A turn a new
 * prompt superseded ends at its last progress mark, as its stop would end it (see
 * `snapshotAtLastMark`): what came since is that prompt's.
 */
export async function closingOpenTurn(
  ctx: SessionContext,
  cat: CatFile,
  open: TurnState,
  before: string,
  now: string,
): Promise<{ changed: RelPath[]; uncertain: RelPath[]; afterLastTool: RelPath[] }> {
  const superseded = open.supersededAt !== undefined;
  const trees = { before, after: superseded ? (open.progress ?? before) : now };
  const diff = await diffTrees(ctx.engine, trees.before, trees.after);
  const others = await journalsAround(ctx.engine, open.startedAt, ctx.journal.file);
  const changed = attributeTurn(
    diff.map((c) => c.path),
    open.touched,
    overlappingTouches(others, open.startedAt, open.supersededAt ?? nowMicros()),
  );
  return { changed, ...(await interruptedDoubts(cat, open, trees, changed, ctx.engine.root)) };
}

/**
 * Refuses (`open-turn`, forceable) a rewind while the session's agent may still be writing: its
 * open turn (`open`, unless the rewind is the agent's own, from inside it), or a prompt whose turn
 * never began (its hook was stopped in the snapshot: the agent went on). A turn or prompt whose
 * conversation, or stop, ended it runs no more.
 */
export function refuseWhileRunning(
  state: SessionState,
  open: TurnState | undefined,
  how: { force: boolean; fromInside: boolean },
): void {
  // An open turn a new prompt superseded runs no more, but that prompt may (see `promptArrived`).
  const runs = (turn: TurnState | undefined) => (turn?.abandonedAt === undefined ? turn : undefined);
  const running = runs(open) ?? (how.fromInside ? undefined : runs(state.unbegun));
  if (!running || how.force) return;
  const session = humanText(state.session);
  const error = new GhostcommitError(
    "open-turn",
    running === open
      ? `session ${session} has an open turn ${humanText(running.turn)}: the agent may still be writing; end the turn first`
      : `session ${session} is working on a prompt whose turn never began (its hook was stopped before the snapshot): the agent may still be writing; wait for it to stop`,
    { session: state.session, turn: running.turn },
  );
  error.forceable = true;
  throw error;
}
