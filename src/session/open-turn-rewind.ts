import type { CatFile } from "../git/cat-file.js";
import type { RelPath } from "../paths.js";
import { diffTrees } from "../restore/restore-snapshot.js";
import { nowMicros } from "../store/metadata.js";
import { attributeTurn, overlappingTouches } from "./attribution.js";
import type { SessionContext } from "./context.js";
import type { TurnState } from "./model.js";
import { interruptedDoubts } from "./progress.js";
import { journalsAround } from "./sessions-around.js";

/**
 * What a rewind that closes the open turn (forced, or a turn whose conversation ended) takes as
 * its work: what differs from its before-state now, and of that, what is in doubt as after an
 * interrupt (no end event came: a change since its last mark may be the person's).
 */
export async function closingOpenTurn(
  ctx: SessionContext,
  cat: CatFile,
  open: TurnState,
  trees: { before: string; after: string },
): Promise<{ changed: RelPath[]; uncertain: RelPath[]; afterLastTool: RelPath[] }> {
  const diff = await diffTrees(ctx.engine, trees.before, trees.after);
  const others = await journalsAround(ctx.engine, open.startedAt, ctx.journal.file);
  const changed = attributeTurn(
    diff.map((c) => c.path),
    open.touched,
    overlappingTouches(others, open.startedAt, nowMicros()),
  );
  return { changed, ...(await interruptedDoubts(cat, open, trees, changed, ctx.engine.root)) };
}
