import { humanText } from "../util/format.js";
import { GhostcommitError } from "../errors.js";
import { sameState, TreeLookup } from "../git/tree-lookup.js";
import { displayPath, type RelPath } from "../paths.js";
import type { PlanStep } from "../restore/plan.js";
import { runRestore } from "../restore/restore.js";
import { displayOutcome, ioSkips } from "../restore/outcome.js";
import { requireSnapshot } from "../store/snapshots.js";
import type { ExpectedRewind, RewindReport } from "../types.js";
import { COMMAND_LINE_OPTION_NAMES } from "../store/option-names.js";
import { conflictError, type SessionContext } from "./context.js";
import type { JournalRecord, RewindState } from "./model.js";
import { overwritten, refuseUnexpected } from "./rewind-checks.js";
import { changesOf, conflictsOf, leftByRewinds, type PathStates } from "./rewind-plan.js";

/**
 * A rewind records its plan before its first file changes (`pending`), and its outcome after the
 * last. Killed in between, it is finished by running it again, or undone by redo: either way the
 * session's record and the files agree again.
 */

/** An open turn a rewind closes (see the journal's rewind record). */
export type ClosedTurn = NonNullable<Extract<JournalRecord, { e: "rewind" }>["closed"]>;

/** The journal fields of a rewind about to apply `steps`: what it will write and delete. */
export function plannedRewind(
  id: string,
  to: string,
  turns: string[],
  safety: string,
  steps: PlanStep[],
  named: RelPath[] | undefined,
  closed: ClosedTurn | undefined,
): Omit<RewindState, "t"> & { closed?: ClosedTurn } {
  return {
    id,
    to,
    turns,
    safety,
    written: steps.flatMap((s) => (s.kind === "write" ? [[s.path, s.state.mode, s.state.oid]] : [])) as [
      RelPath,
      string,
      string,
    ][],
    deleted: steps.flatMap((s) => (s.kind === "delete" ? [s.path] : [])),
    ...(named ? { paths: named } : {}),
    ...(closed ? { closed } : {}),
  };
}

/** What `doctor` tells a person whose rewind died half-way. */
export function interruptedHint(session: string, to: string, named: RelPath[] | undefined): string {
  return COMMAND_LINE_OPTION_NAMES.interruptedRewind(session, to, named !== undefined);
}

function samePaths(a: RelPath[] | undefined, b: RelPath[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
}

/**
 * Finishes a rewind killed half-way: each path it planned goes to its planned state, unless it is
 * there already (written before the kill); a path that is neither there nor as the rewind found
 * it was changed by someone since, a conflict as for any rewind. The outcome keeps the first
 * safety snapshot, so redo puts back the files as they were before the rewind began.
 */
export async function resumeRewind(
  ctx: SessionContext,
  pending: RewindState,
  request: {
    to: string;
    force: boolean;
    dryRun: boolean;
    named: RelPath[] | undefined;
    expect: ExpectedRewind | undefined;
    signal?: AbortSignal;
  },
): Promise<RewindReport> {
  const { engine, journal } = ctx;
  const session = journal.session;
  if (pending.to !== request.to || !samePaths(pending.paths, request.named)) {
    throw new GhostcommitError(
      "bad-input",
      `the rewind of session ${humanText(session)} to turn ${humanText(pending.to)}${pending.paths ? " (some paths)" : ""} was interrupted: ${engine.optionNames.interruptedRewind(session, pending.to, pending.paths !== undefined)}`,
      { session, turn: pending.to },
    );
  }
  const where = { session, to: pending.to };
  refuseUnexpected(request.expect, where, pending.turns);
  const planned = leftByRewinds([pending]);
  const paths = [...planned.keys()];
  return engine.withReader(async (cat) => {
    const lookup = new TreeLookup(cat);
    const found = await requireSnapshot(
      cat,
      pending.safety,
      `taken before the rewind to turn ${pending.to}`,
      undefined,
      engine.refs,
    );
    const reached = new Set<RelPath>();
    let overridden: string[] = [];
    const result = await runRestore(engine, cat, {
      includes: paths,
      dryRun: request.dryRun,
      safetyMessage: `before finishing the rewind of session ${session} to turn ${pending.to}`,
      guards: pending.safety,
      session,
      signal: request.signal,
      interruptedHint: interruptedHint(session, pending.to, pending.paths),
      refusePlan: (steps) => refuseUnexpected(request.expect, where, pending.turns, steps, overridden),
      target: async (currentTree) => {
        const states: PathStates[] = [];
        for (const p of paths) {
          const current = await lookup.file(currentTree, p);
          const target = planned.get(p)!;
          if (sameState(current, target)) reached.add(p);
          // As the rewind found it (its check passed then), or already as it left it.
          states.push({
            path: p,
            current,
            target,
            expected: await lookup.file(found.tree, p),
            leftByRewind: target,
          });
        }
        const conflicts = conflictsOf(states);
        if (!request.force && conflicts.length > 0)
          throw conflictError("rewind", session, conflicts.map(displayPath));
        overridden = conflicts.map(displayPath);
        const changes = changesOf(states);
        // The rewind proved each of its deletions before it planned them.
        return {
          changes,
          provenAbsent: new Set(changes.filter((c) => c.target === null).map((c) => c.path)),
        };
      },
    });
    const report: RewindReport = {
      session,
      to: pending.to,
      rewoundTurns: pending.turns,
      resumed: true,
      ...displayOutcome(result),
    };
    if (pending.paths) report.paths = pending.paths.map(displayPath);
    const overwrote = overwritten(overridden, report);
    if (overwrote.length > 0) report.overridden = overwrote;
    if (request.dryRun) {
      report.dryRun = true;
      return report;
    }
    if (ioSkips(report)) return report; // still files it cannot write: still to finish (see rewindSession)
    const done = new Set([...reached, ...result.written, ...result.deleted]);
    const { pending: _pending, t: _t, ...finished } = pending;
    const written = pending.written.filter(([p]) => done.has(p));
    const deleted = pending.deleted.filter((p) => done.has(p));
    await journal.append([{ e: "rewind", ...finished, written, deleted }], true);
    // The whole rewind's outcome, as one run would have said it: the files the killed run had
    // already put back are back too (this run's own writes alone left them out).
    report.written = written.map(([p]) => displayPath(p));
    report.deleted = deleted.map(displayPath);
    return report;
  });
}
