import type { SessionContext } from "./context.js";
import { openTurnOf } from "./model.js";

/**
 * The agent's conversation ended (cleared, exited) with a turn open, as after an interrupt: the
 * turn is marked as over, without a snapshot (the agent gives its end hooks 1.5 s), so other
 * sessions' later turns do not count it as running beside them. Its changes stay as an
 * interrupt leaves them: a resumed conversation's next prompt ends it, its later ones uncertain.
 * Returns the turn, or null when none was open. A prompt whose turn never began is marked as over
 * the same way (at its stop, or the conversation's end).
 */
export async function abandonTurn(ctx: SessionContext): Promise<string | null> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  return journal.locked(async () => {
    const state = await journal.load();
    // Or the prompt it was working on whose turn never began (see `promptArrived`): its stop came.
    const open = openTurnOf(state) ?? state.unbegun;
    if (open && open.abandonedAt === undefined) await journal.append([{ e: "abandon", turn: open.turn }]);
    return open?.turn ?? null;
  });
}
