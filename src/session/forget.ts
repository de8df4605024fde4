import { promises as fs, statSync } from "node:fs";
import type { StoreContext } from "../store/context.js";
import { goneSnapshots } from "../store/live-snapshots.js";
import { Journal, journalFiles, readJournal } from "./journal.js";
import { openTurnOf, type SessionState } from "./model.js";

/**
 * Forgets the sessions retention has nothing left of: every snapshot their journal names is gone
 * from the store (both of the workspace's stores), and neither they nor their journal changed
 * since `olderThanMs` (ms since epoch). Never the latest session (what `log` and `rewind` without
 * `--session` resolve), one with a turn running, or one whose rewind did not finish. Without this,
 * every conversation ever held in the workspace stays listed by `sessions` and read by every
 * command that scans them. Returns how many were forgotten.
 */
export async function forgetExpiredSessions(engine: StoreContext, olderThanMs: number): Promise<number> {
  const dir = engine.paths.sessionsDir;
  // Newest modified first: the first with a turn is the latest session (what log and rewind
  // take), never forgotten; a newer one of no turn (a mistyped touch --session) is not it.
  const files = journalFiles(dir);
  let latest = 0;
  while (latest < files.length && !((await readJournal(files[latest].file))?.state.turns.length ?? 0))
    latest++;
  const rest = files.filter((_, i) => i !== latest);
  const candidates: { file: string; mtimeMs: number; state: SessionState }[] = [];
  for (const { file, mtimeMs } of rest) {
    if (mtimeMs >= olderThanMs) continue;
    const journal = await readJournal(file);
    if (!journal || journal.state.updatedAt / 1000 >= olderThanMs || !idle(journal.state)) continue;
    candidates.push({ file, mtimeMs, state: journal.state });
  }
  if (candidates.length === 0) return 0;
  const gone = await goneSnapshots(
    engine.refs,
    candidates.flatMap((c) => namedSnapshots(c.state)),
  );
  let forgotten = 0;
  for (const { file, mtimeMs, state } of candidates) {
    if (!namedSnapshots(state).every((id) => gone.has(id))) continue;
    // Under the session's lock, and only if nothing wrote to it since it was read (a turn begun
    // in that conversation meanwhile keeps it). One unlink: a gc killed here leaves the whole
    // journal or none, never a part of one.
    const removed = await new Journal(dir, state.session).locked(async () => {
      if (modifiedMs(file) !== mtimeMs) return false;
      await fs.rm(file, { force: true });
      return true;
    });
    if (removed) forgotten++;
  }
  return forgotten;
}

/**
 * No turn running and no rewind left unfinished (those stay until finished or undone). A turn
 * still open when its conversation ended (`abandonTurn`, an agent's SessionEnd) runs no more.
 */
function idle(state: SessionState): boolean {
  const open = openTurnOf(state);
  if (open && open.abandonedAt === undefined) return false;
  const rewinds = [...state.redoStack, ...state.rewinds.values(), ...(state.heldRedo?.stack ?? [])];
  return !rewinds.some((rewind) => rewind.pending);
}

/** The snapshots a session's journal names: its turns' before and after, its rewinds' safety snapshots. */
function namedSnapshots(state: SessionState): string[] {
  const ids = state.turns.flatMap((t) => (t.after ? [t.before, t.after] : [t.before]));
  for (const rewind of [...state.redoStack, ...state.rewinds.values()]) ids.push(rewind.safety);
  return ids;
}

function modifiedMs(file: string): number | null {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}
