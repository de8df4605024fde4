import type { SessionContext } from "./context.js";
import { openTurnOf } from "./model.js";

/**
 * The agent's conversation ended (cleared, exited) with a turn open, as after an interrupt: the
 * turn is marked as over, without a snapshot (the agent gives its end hooks 1.5 s), so other
 * sessions' later turns do not count it as running beside them. Its changes stay as an
 * interrupt leaves them: a resumed conversation's next prompt ends it, its later ones uncertain.
 * Returns the turn, or null when none was open.
 */
export async function abandonTurn(ctx: SessionContext): Promise<string | null> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  return journal.locked(async () => {
    const open = openTurnOf(await journal.load());
    if (open && open.abandonedAt === undefined) await journal.append([{ e: "abandon", turn: open.turn }]);
    return open?.turn ?? null;
  });
}
