import { expectedRedo } from "./expected-plan.js";
import { GhostcommitError } from "../errors.js";
import { refusedWithPlan } from "./refused-plan.js";
import { headMovedSince, withHeadMoved } from "../restore/head-moved.js";
import { turnsNamed, humanText } from "../util/format.js";
import { shellWord } from "../util/shell.js";
import { displayPath, type RelPath } from "../paths.js";
import { runRestore } from "../restore/restore.js";
import { displayOutcome, ioSkips } from "../restore/outcome.js";
import type { ExpectedRedo, RedoOptions, RedoReport } from "../types.js";
import { conflictError, type SessionContext } from "./context.js";
import { changesOf, conflictsOf, leftByRewinds, type PathStates } from "./rewind-plan.js";
import { otherFiles, overwritten } from "./rewind-checks.js";
import { overriddenStates, stateOfShown } from "./overridden-state.js";
import { requireSnapshot } from "../store/snapshots.js";
import { insideSparseCheckout } from "../restore/sparse-absent.js";
import { sameState, TreeLookup } from "../git/tree-lookup.js";
import { worktreeStates } from "../capture/worktree-state.js";
import { commitTree } from "../git/trees.js";
import { openTurnOf, type RewindState, type SessionState } from "./model.js";
import { clearFirst, obstructions } from "./obstructions.js";
import { refuseWhileRunning } from "./open-turn-rewind.js";

/**
 * `redo`: undoes the session's last rewind that is still undoable. Only the paths that rewind
 * wrote or deleted change, each back to its state in the rewind's safety snapshot; the rewound
 * turns are `done` again. Refuses (unless forced) when someone changed such a path since the
 * rewind. Repeated redo walks back through earlier rewinds; a new turn discards them all (see
 * `heldRedo` for the one exception).
 */
export async function redoSession(ctx: SessionContext, options: RedoOptions = {}): Promise<RedoReport> {
  const { engine, journal } = ctx;
  const session = journal.session;
  const force = Boolean(options.force);
  const dryRun = Boolean(options.dryRun);
  const expect = expectedRedo(options.expect, "expect");
  engine.assertEnabled();
  return journal.locked(async () => {
    const state = await journal.load();
    const rewind = state.redoStack.at(-1) ?? (options.keepOpenTurn ? await heldRedo(ctx, state) : undefined);
    if (!rewind) {
      // A turn since the last rewind ended what redo brings back: say so, and where the files are.
      const last = [...state.rewinds.values()].at(-1);
      const newer = last !== undefined && (state.turns.at(-1)?.startedAt ?? 0) > last.t;
      // The latest undo was a redo: that is why nothing is left, not an older rewind's turn.
      const redone = state.redos.at(-1);
      const since =
        redone && (!last || redone.t > last.t)
          ? `: its latest rewind, to turn ${humanText(redone.rewind.to)}, was redone already`
          : newer
            ? `: a turn began after its rewind to turn ${humanText(last.to)}, and a new turn ends what redo can bring back; that rewind's safety snapshot ${last.safety.slice(0, 12)} holds the files as they were before it (\`ghostcommit -C ${shellWord(engine.root)} restore ${last.safety.slice(0, 12)} -- PATH\`, PATH from the workspace's top, brings one back, wherever it is run)`
            : "";
      throw new GhostcommitError(
        "nothing-to-redo",
        `session ${humanText(session)} has no rewind to redo${since}`,
        {
          session,
        },
      );
    }
    refuseOtherRedo(expect, session, rewind.turns);
    // As a rewind: not while the agent may be writing (from a terminal), unless forced. A rewind
    // killed half-way is settled first, whatever runs (as running it again finishes it).
    const open = options.keepOpenTurn || rewind.pending ? undefined : openTurnOf(state);
    const fromInside = Boolean(options.keepOpenTurn || rewind.pending);
    refuseWhileRunning(state, open, { force, fromInside });
    const left = leftByRewinds([rewind]);
    const paths = [...left.keys()];
    return engine.withReader(async (cat) => {
      const safety = await requireSnapshot(
        cat,
        rewind.safety,
        `taken before the rewind to turn ${rewind.to}`,
        undefined,
        engine.refs,
      );
      const lookup = new TreeLookup(cat);
      // Conflicts --force overwrites (or would, in a dry run): said, never silent, as a rewind's are.
      let overridden: string[] = [];
      let overriddenNow = new Map<string, string>();
      let refusal: GhostcommitError | null = null;
      if (!force && !dryRun) {
        const now = await worktreeStates(engine, paths);
        const conflicts: RelPath[] = [];
        for (const p of paths) {
          const current = now.get(p);
          if (current === undefined || sameState(current, left.get(p)!)) continue;
          // Already back as before the rewind: a redo killed half-way and run again wrote it.
          if (!sameState(current, await lookup.file(safety.tree, p))) conflicts.push(p);
        }
        const inside = await insideSparseCheckout(engine, conflicts);
        if (inside.length > 0) {
          const head = await headMovedSince(engine.location, safety.meta.parent);
          throw withHeadMoved(conflictError("redo", session, inside.sort().map(displayPath)), head);
        }
      }
      const result = await runRestore(engine, cat, {
        includes: paths,
        dryRun,
        safetyMessage: `before redoing ${turnsNamed(rewind.turns)} of session ${session}`,
        interruptedHint: `\`ghostcommit redo --session ${shellWord(session)}\` finishes it`,
        interruptedRedo: true,
        guards: rewind.safety,
        session,
        signal: options.signal,
        targetHead: safety.meta.parent,
        // As a rewind's: only the files shown are written, and only the conflicts shown overwritten.
        refusePlan: (steps) => {
          const changes = expect ? otherFiles(expect, steps, overridden, "the rewind", overriddenNow) : [];
          if (changes.length > 0) throw otherPlan(session, `it would now ${changes.join(" and ")}`);
        },
        target: async (currentTree) => {
          const states: PathStates[] = [];
          for (const p of paths) {
            states.push({
              path: p,
              current: await lookup.file(currentTree, p),
              target: await lookup.file(safety.tree, p),
              expected: left.get(p),
            });
          }
          const changes = changesOf(states);
          const blockers = await obstructions(changes, currentTree, lookup);
          const conflicts = await insideSparseCheckout(engine, conflictsOf(states, blockers));
          // A dry run goes on as a forced one would, to show that plan with the refusal.
          if (!force && conflicts.length > 0)
            refusal = conflictError("redo", session, conflicts.map(displayPath));
          if (refusal && !dryRun) throw refusal;
          overridden = conflicts.map(displayPath);
          overriddenNow = await overriddenStates(conflicts, currentTree, lookup);
          // The rewind's safety snapshot captured each of these paths, so its absence there is proof.
          const provenAbsent = new Set(changes.filter((c) => c.target === null).map((c) => c.path));
          if (force || refusal) clearFirst(blockers, changes, provenAbsent);
          return { changes, provenAbsent };
        },
      });
      const report: RedoReport = {
        session,
        restoredTurns: rewind.turns,
        ...displayOutcome(result),
      };
      const overwrote = overwritten(overridden, report);
      if (overwrote.length > 0) report.overridden = overwrote;
      if (refusal) throw refusedWithPlan(refusal, report);
      if (dryRun) {
        if (overwrote.length > 0) report.overriddenState = stateOfShown(overriddenNow, overwrote);
        report.dryRun = true;
        return report;
      }
      // Files it could not write (a full disk): not recorded, so the rewind stays to redo, and the
      // next redo finishes it (the files already back count as no conflict), as for a rewind.
      if (ioSkips(report)) return report;
      const deleted = [...result.deleted];
      await journal.append([{ e: "redo", rewind: rewind.id, safety: result.safety!, deleted }], true);
      return report;
    });
  });
}

/**
 * The rewind a redo from inside the open turn (`keepOpenTurn`) may still undo although the turn's
 * beginning discarded the redo history (or that of an earlier turn that changed nothing): the
 * command's own prompt began that turn (Claude Code's `/ghostcommit-redo`, a request the agent
 * answers with the MCP tool). Only while the turn has changed nothing the journal knows of: no
 * touched path, no progress mark unlike its start.
 */
async function heldRedo(ctx: SessionContext, state: SessionState): Promise<RewindState | undefined> {
  const open = openTurnOf(state);
  const held = state.heldRedo;
  if (!open || held?.turn !== open.turn || open.touched.size > 0) return;
  if (open.marks.length > 0) {
    const start = await ctx.engine.withReader((cat) => commitTree(cat, open.before));
    if (open.marks.some((m) => m.tree !== start)) return;
  }
  return held.stack.at(-1);
}

/**
 * Refuses (`plan-changed`) a redo of another rewind than the one the caller showed: one made, or
 * redone, since (by another window, the command line) would bring back turns nobody was shown.
 */
function refuseOtherRedo(expected: ExpectedRedo | undefined, session: string, turns: string[]): void {
  if (!expected) return;
  const shown = expected.restoredTurns;
  if (shown.length === turns.length && shown.every((t, i) => t === turns[i])) return;
  throw otherPlan(session, `it would now bring back ${turnsNamed(turns)}, not ${turnsNamed(shown)}`);
}

function otherPlan(session: string, what: string): GhostcommitError {
  return new GhostcommitError(
    "plan-changed",
    `the redo is no longer the one shown: ${what}; nothing was changed`,
    { session },
  );
}
