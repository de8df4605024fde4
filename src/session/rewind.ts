import { humanText } from "../util/format.js";
import { randomHex } from "../util/crypto.js";
import type { FileState } from "../git/trees.js";
import { GhostcommitError } from "../errors.js";
import { displayPath, type RelPath } from "../paths.js";
import { runRestore } from "../restore/restore.js";
import { displayOutcome, ioSkips } from "../restore/outcome.js";
import type { StoredSnapshot } from "../store/store.js";
import type { RewindOptions, RewindReport } from "../types.js";
import { checkTurnId, requireTurn, type SessionContext, turnIdOf } from "./context.js";
import { proveDeletions } from "./deletions.js";
import { openTurnOf } from "./model.js";
import { expectedRewind } from "./expected-plan.js";
import {
  alreadyRewound,
  overwritten,
  precheck,
  refuseNothingToPutBack,
  refuseUnchanged,
  refuseUnexpected,
  rewindConflict,
} from "./rewind-checks.js";
import { refusedWithPlan } from "./refused-plan.js";
import { type ClosedTurn, interruptedHint, plannedRewind, resumeRewind } from "./rewind-resume.js";
import { closingOpenTurn, refuseWhileRunning } from "./open-turn-rewind.js";
import { overriddenStates, stateOfShown } from "./overridden-state.js";
import { refuseUnmatched, resolveNamedPaths, selectNamed } from "../restore/path-filter.js";
import {
  attributePaths,
  changesOf,
  conflictsOf,
  isUncertain,
  type UncertainPaths,
  leftByRewinds,
  notePermissionSources,
  originOf,
  partialRewindsInEffect,
  type PathStates,
  type RewoundTurn,
  rewindOutcome,
  withFilesLeftOut,
  newlyExcluded,
} from "./rewind-plan.js";
import { changedBetweenTurns, rewoundBetweenOf, rewindsBetweenOf } from "./between-turns.js";
import { requireSnapshot } from "../store/snapshots.js";
import { insideSparseCheckout } from "../restore/sparse-absent.js";
import { TreeLookup } from "../git/tree-lookup.js";
import { existsNow, isFileOnDisk } from "../util/small-files.js";
import { addLeftSkips, inDependencyDirsSince, touchedBy } from "./rewind-skips.js";
import { clearFirst, obstructions } from "./obstructions.js";

/**
 * `rewind --to T`: every path that turns T and later (of this session, not yet rewound)
 * changed goes back to its state before the first of them that changed it; nothing else is
 * touched. Refuses when an open turn may still be writing (unless the caller is that turn's own
 * agent, `keepOpenTurn`), or when someone changed such a path after the session's last turn that
 * did, unless forced.
 */
export async function rewindSession(ctx: SessionContext, options: RewindOptions): Promise<RewindReport> {
  const { engine, journal } = ctx;
  const given = checkTurnId(options?.to);
  const force = Boolean(options.force);
  const dryRun = Boolean(options.dryRun);
  const session = journal.session;
  let named = resolveNamedPaths(engine.root, options.paths);
  const expect = expectedRewind(options.expect, "expect");
  engine.assertEnabled();
  return journal.locked(async () => {
    const state = await journal.load();
    const to = turnIdOf(state, given);
    // A rewind killed half-way: the same rewind finishes it, redo undoes it; nothing else runs first.
    const interrupted = state.redoStack.at(-1);
    if (interrupted?.pending)
      return resumeRewind(ctx, interrupted, { to, force, dryRun, named, expect, signal: options.signal });
    const target = requireTurn(state, to, ctx.engine);
    if (target.state === "rewound") throw alreadyRewound(state, to);
    const live = state.turns.filter((t) => t.state !== "rewound");
    const openNow = openTurnOf(state);
    // The agent undoing from inside its turn: that turn is not undone and stays open; its edits so
    // far differ from the earlier turns' after-states, so the conflict check below catches them.
    const keepOpen = Boolean(options.keepOpenTurn) && openNow !== undefined;
    if (keepOpen && target === openNow) {
      throw new GhostcommitError(
        "bad-input",
        `turn ${humanText(to)} of session ${humanText(session)} is the open turn: only earlier turns can be rewound from inside it`,
        { session, turn: to },
      );
    }
    const turns = live.slice(live.indexOf(target)).filter((t) => !(keepOpen && t === openNow));
    const ids = turns.map((t) => t.turn);
    refuseUnexpected(expect, { session, to }, ids);
    const open = keepOpen ? undefined : openNow;
    const keptOpen = keepOpen ? openNow?.turn : undefined;
    // A turn whose conversation ended (SessionEnd) is not running: only its uncertain paths need --force.
    refuseWhileRunning(state, open, { force, fromInside: Boolean(options.keepOpenTurn) });
    return engine.withReader(async (cat) => {
      const lookup = new TreeLookup(cat);
      const listed = new Set((await engine.refs.list()).map((s) => s.id));
      const befores = await Promise.all(
        turns.map((t) => requireSnapshot(cat, t.before, `before turn ${t.turn}`, listed, engine.refs)),
      );
      const afters = await Promise.all(
        turns.map((t) =>
          t.after ? requireSnapshot(cat, t.after, `after turn ${t.turn}`, listed, engine.refs) : null,
        ),
      );
      // Turns of the range already rewound, latest first: an undo from inside a later turn stays undone.
      const tolerant = (id: string | null) =>
        id ? requireSnapshot(cat, id, "a rewound turn", listed, engine.refs).catch(() => null) : null;
      const rewound = state.turns.slice(state.turns.indexOf(target)).filter((t) => t.state === "rewound");
      const rewoundTurns: (RewoundTurn<StoredSnapshot> & { index: number })[] = await Promise.all(
        rewound.reverse().map(async (turn) => ({
          turn,
          index: state.turns.indexOf(turn),
          before: await tolerant(turn.before),
          after: await tolerant(turn.after),
        })),
      );
      // As for restore and diff: a named path must name something (a typo would rewind nothing).
      const trees = [...befores, ...afters].flatMap((s) => (s ? [s.tree] : []));
      named = await refuseUnmatched(named, cat, trees, engine.root);
      const where = { session, turns: ids };
      // An open turn's changes are known once the capture has seen them (below).
      const changedBy = turns.map((t) => t.changed);
      // A file a turn took out of its capture (made unreadable, grown past a limit) was its change
      // too: named, it is reported as left (an `excluded` skip), as the whole rewind reports it.
      const leftOut = newlyExcluded(
        befores[0].meta,
        afters.map((a) => a?.meta ?? null),
      );
      if (!open) refuseUnchanged(named, [...changedBy, leftOut], where);
      // Paths an earlier rewind of some paths put back are the session's doing, not someone else's:
      // every such rewind a turn still lists, also once a new turn has emptied the redo stack.
      const partial = leftByRewinds(partialRewindsInEffect(state));
      const sequence = {
        befores,
        afters,
        rewoundBetween: rewoundBetweenOf(state.turns, turns, rewoundTurns),
        rewindsBetween: rewindsBetweenOf(turns, state),
      };
      const checks = { touched: touchedBy(state, turns), keptOpen };
      if (!force && !dryRun) await precheck(ctx, lookup, turns, sequence, named, partial, checks);
      const targets = new Map<RelPath, FileState | null>();
      const originOfPath = new Map<RelPath, { snapshot: StoredSnapshot; absent: ReadonlySet<RelPath> }>();
      let closed: ClosedTurn | undefined;
      const uncertainOf: UncertainPaths[] = turns.map((t) => ({
        uncertain: t.uncertain,
        afterLastTool: t.afterLastTool,
      }));
      // Conflicts --force overwrites (or would, in a dry run): said, never silent.
      let overridden: string[] = [];
      let overriddenNow = new Map<string, string>();
      let refusal: GhostcommitError | null = null;
      // Paths whose state before the turn was never captured: reported, never written.
      const notCaptured: RelPath[] = [];
      const excludedNow = new Set<RelPath>();
      const id = randomHex(8);
      const includes = new Set<RelPath>([
        ...state.touched,
        ...turns.flatMap((t) => [...t.changed, ...t.touched]),
      ]);
      const result = await runRestore(engine, cat, {
        includes: [...includes],
        dryRun,
        safetyMessage: `before rewinding session ${session} to turn ${to}`,
        guards: target.before,
        session,
        signal: options.signal,
        targetHead: befores[0].meta.parent,
        interruptedHint: interruptedHint(session, to, named),
        refusePlan: (steps) =>
          refuseUnexpected(expect, { session, to }, ids, steps, overridden, overriddenNow),
        beforeApply: (steps, safety) => {
          return journal
            .append(
              [
                {
                  e: "rewind",
                  ...plannedRewind(id, to, ids, safety, steps, named, closed),
                  pending: true,
                },
              ],
              true,
            )
            .then(() => {});
        },
        target: async (currentTree, capturedRepos) => {
          const read = (snapshot: StoredSnapshot, p: RelPath) => lookup.file(snapshot.tree, p);
          const changedLists = await withFilesLeftOut(changedBy, befores, afters, read);
          if (open) {
            const index = turns.indexOf(open);
            const closing = await closingOpenTurn(ctx, cat, open, befores[index].tree, currentTree);
            const { changed, uncertain: since, afterLastTool } = closing;
            changedLists[index] = changed;
            uncertainOf[index] = { uncertain: new Set(since), afterLastTool: new Set(afterLastTool) };
            closed = { turn: open.turn, changed, ...(since.length > 0 ? { uncertain: since } : {}) };
            refuseUnchanged(named, [...changedLists, leftOut], where);
          }
          const all: PathStates[] = [];
          const attributed = attributePaths(changedLists.map((changed) => ({ changed })));
          const since = await inDependencyDirsSince(engine, attributed.keys(), touchedBy(state, turns));
          for (const [p, span] of attributed) {
            const { first, last } = span;
            if (turns[first].beforeUnknown.has(p)) {
              notCaptured.push(p);
              continue;
            }
            const current = await lookup.file(currentTree, p);
            // A file on disk but not in the capture now: excluded since (a .ghostignore line, a
            // lower size limit, unreadable). Its state is unknown, so it is left as it is. (A
            // directory where the file was is the turn's change, which the rewind undoes.)
            if ((current === null && isFileOnDisk(engine.root, p)) || since.has(p)) {
              excludedNow.add(p);
              continue;
            }
            const after = afters[last];
            const earlier = rewoundTurns.filter((r) => r.index < state.turns.indexOf(turns[first]));
            const origin = await originOf(
              p,
              { snapshot: befores[first], absent: turns[first].beforeAbsent },
              earlier,
              (snapshot, path) => lookup.file(snapshot.tree, path),
            );
            all.push({
              path: p,
              current,
              target: await lookup.file(origin.snapshot.tree, p),
              expected: after ? await lookup.file(after.tree, p) : undefined,
              uncertain: isUncertain(uncertainOf, p, span),
              afterLastTool: isUncertain(uncertainOf, p, span, "afterLastTool"),
              leftByRewind: partial.get(p),
              betweenTurns: await changedBetweenTurns(read, p, span, sequence, partial.get(p)),
            });
            originOfPath.set(p, origin);
          }
          const states = selectNamed(all, named);
          const changes = changesOf(states);
          const blockers = await obstructions(changes, currentTree, lookup);
          const conflicts = await insideSparseCheckout(engine, conflictsOf(states, blockers));
          const afterOf = (p: RelPath) => afters[attributed.get(p)!.last];
          // A dry run goes on as a forced one would, to show that plan with the refusal.
          if (!force && conflicts.length > 0)
            refusal = await rewindConflict(engine, cat, { session, keptOpen }, states, conflicts, afterOf);
          if (refusal && !dryRun) throw refusal;
          overridden = conflicts.map(displayPath);
          const leftAlone = [
            ...notCaptured,
            ...excludedNow,
            ...leftOut.filter((p) => existsNow(engine.root, p)),
          ];
          refuseNothingToPutBack(named, { changes: changes.length, leftAlone }, { session, to });
          for (const c of changes) targets.set(c.path, c.target);
          const deletions = changes.filter((c) => c.target === null).map((c) => c.path);
          const provenAbsent = await proveDeletions(
            engine,
            cat,
            lookup,
            currentTree,
            capturedRepos,
            deletions,
            (p) => originOfPath.get(p)!,
          );
          if (force || refusal) clearFirst(blockers, changes, provenAbsent);
          overriddenNow = await overriddenStates(conflicts, currentTree, lookup);
          return { changes, provenAbsent };
        },
      });
      const report: RewindReport = { session, to, rewoundTurns: ids, ...displayOutcome(result) };
      notePermissionSources(report.skipped, result.skipped, originOfPath);
      addLeftSkips(report, {
        notCaptured,
        root: engine.root,
        named,
        before: befores[0].meta,
        afters: afters.map((a) => a?.meta ?? null),
        excludedNow,
      });
      if (named) report.paths = named.map(displayPath);
      const overwrote = overwritten(overridden, report);
      if (overwrote.length > 0) report.overridden = overwrote;
      if (refusal) throw refusedWithPlan(refusal, report);
      if (dryRun) {
        if (overwrote.length > 0) report.overriddenState = stateOfShown(overriddenNow, overwrote);
        report.dryRun = true;
        return report;
      }
      // Files it could not write (a full disk, an I/O error): it stays pending, as a rewind killed
      // half-way does, so running it again finishes it once they can be written (redo undoes it).
      if (ioSkips(report)) return report;
      const outcome = rewindOutcome(result.written, result.deleted, targets);
      const record = { e: "rewind" as const, id, to, turns: report.rewoundTurns, safety: result.safety! };
      await journal.append(
        [{ ...record, ...outcome, ...(named ? { paths: named } : {}), ...(closed ? { closed } : {}) }],
        true,
      );
      return report;
    });
  });
}
