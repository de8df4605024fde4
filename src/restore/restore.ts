import { randomHex } from "../util/crypto.js";
import { captureTree, writeUnpublishedSnapshot } from "../capture/snapshot.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Captured } from "../capture/context.js";
import { workspaceGhostignore } from "../capture/ghostignore-dirs.js";
import { ignoresCase } from "../capture/conversion.js";
import { ghostignoreMatch } from "../capture/policy.js";
import type { StoreContext } from "../store/context.js";
import { type CatFile, missingObjects } from "../git/cat-file.js";
import type { RelPath } from "../paths.js";
import type { HeadMoved } from "../types.js";
import type { StoredExclusion } from "../store/metadata.js";
import { missingObjectError } from "../git/diff-tree.js";
import { GhostcommitError } from "../errors.js";
import {
  journalFile,
  type RestoreJournal,
  settleEarlierInterrupted,
  journalDirs,
} from "../store/restore-journal.js";
import { STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { writeLastSafety } from "../store/last-safety.js";
import { syncDirs } from "../util/durable.js";
import { withLock } from "../util/lock.js";
import { settledWith } from "../util/settled.js";
import { trace } from "../util/trace.js";
import { type ApplyOutcome, applyPlan, plannedSkip } from "./apply.js";
import { presentUncapturedOf, skipUnseenEdits } from "./unseen-edits.js";
import { skipExcludedNow } from "./excluded-now.js";
import { keepGuardingGhostignores } from "./guarding-ghostignores.js";
import { skipOutsideSparseCheckout } from "./sparse-absent.js";
import { skipBlockedWrites } from "./obstacles.js";
import { type PathChange, type PlanStep, planRestore } from "./plan.js";
import { isoFromMillis } from "../util/format.js";
import { headMoved, withHeadMoved } from "./head-moved.js";
import { skipUnwritable } from "./replaced-file.js";
import { announce } from "../util/announce.js";

/** What the caller wants restored, computed once the current state (the safety tree) is known. */
export interface RestoreTarget {
  changes: PathChange[];
  provenAbsent: Set<RelPath>;
  /** Named paths the restore can change nothing at (see `namedOutsideCapture`). */
  outside?: PlanStep[];
}

export interface RestoreRun {
  /** Paths to capture in the safety snapshot even if ignored (so the restore can be undone). */
  includes: RelPath[];
  dryRun: boolean;
  safetyMessage: string;
  guards?: string;
  session?: string;
  /** Computes the wanted changes from the current tree and the repositories it looked into. */
  target: (currentTree: string, capturedRepos: readonly RelPath[]) => Promise<RestoreTarget>;
  /**
   * Checks the plan before it is carried out: a throw refuses the restore as the final check's
   * conflicts do, so the store stays as it was (its safety snapshot goes).
   */
  refusePlan?: (steps: PlanStep[]) => void;
  /**
   * Runs once the way back is on disk, before the first file changes: a caller that must be able
   * to resume or undo a restore killed half-way records its plan here.
   */
  beforeApply?: (steps: PlanStep[], safety: string) => Promise<void>;
  /** How to finish or undo this restore if it dies half-way, for `doctor` (a sentence). */
  interruptedHint?: string;
  /** The restore is a redo's: `doctor` says a redo was interrupted. */
  interruptedRedo?: boolean;
  /** Checked until the first file is written (see `stopIfCancelled`); after that the restore finishes. */
  signal?: AbortSignal;
  /** The HEAD the state restored to was captured at: a HEAD moved since is said (see HeadMoved). */
  targetHead?: string | null;
}

export interface RestoreResult extends ApplyOutcome {
  safety: string | null;
  head?: HeadMoved;
}

/**
 * The one restore procedure behind `restore`, `rewind` and `redo`: safety snapshot first, then a
 * pure plan, then every needed object is read before the first file changes.
 */
export async function runRestore(
  engine: StoreContext,
  cat: CatFile,
  run: RestoreRun,
): Promise<RestoreResult> {
  cat.startAhead(); // the plan reads the target's trees and files once the capture is done
  if (run.dryRun) return restoreLocked(engine, cat, run);
  // One restore at a time per workspace: a second waits, then its safety snapshot holds the first's result.
  return withLock(
    path.join(engine.paths.dir, STORE_FILES.restoreLock),
    () => restoreLocked(engine, cat, run),
    {
      waitingOn: "another restore of this workspace",
      onWait: announce,
    },
  );
}

/**
 * A cancelled restore stops only before its first file changes: one stopped half-way would leave
 * the workspace neither as it was nor as asked, so from then on it runs to its end.
 */
function stopIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new GhostcommitError("cancelled", "cancelled before any file was changed");
}

async function restoreLocked(engine: StoreContext, cat: CatFile, run: RestoreRun): Promise<RestoreResult> {
  stopIfCancelled(run.signal); // it may have waited for another restore's lock
  let currentTree: string;
  let safety: string | null = null;
  let capturedRepos: RelPath[] = [];
  let currentExcluded: StoredExclusion[];
  let published: Promise<void> = Promise.resolve();
  let headNow: string | null;
  if (run.dryRun) {
    const captured = await captureTree(engine, cat, run.includes);
    currentTree = captured.tree;
    capturedRepos = captured.nested ?? [];
    currentExcluded = captured.excluded;
    headNow = captured.parent;
  } else {
    engine.prepareFlush();
    const snap = await writeUnpublishedSnapshot(engine, cat, run.includes, {
      kind: "safety",
      message: run.safetyMessage,
      guards: run.guards,
      session: run.session,
    });
    // Durable: after a power cut mid-restore, the way back must still be on disk. The flush runs
    // while the plan is made (it only reads); no file changes before it is done.
    published = snap.publish(true);
    published.catch(() => {}); // awaited below, on every path
    currentTree = snap.tree;
    safety = snap.id;
    capturedRepos = snap.meta.nested ?? [];
    currentExcluded = snap.meta.excluded;
    headNow = snap.meta.parent;
  }
  const moved = headMoved(engine.location, run.targetHead, headNow);
  const prepared = await settledWith(
    published,
    prepareRestore(engine, cat, run, currentTree, capturedRepos, currentExcluded),
  ).catch(async (error) => {
    // Refused by the final check (a conflict the capture showed) or failed before any file
    // changed: a refusal leaves the store as it was, so its safety snapshot goes too.
    if (safety) await engine.refs.remove([safety]).catch(() => {});
    throw withHeadMoved(error, await moved.catch(() => undefined));
  });
  const head = await moved;
  if (prepared.kind === "dry-run") return head ? { ...prepared.result, head } : prepared.result;
  const { steps, contents } = prepared;
  trace("restore: planned, way back on disk");
  // Protected from retention from now on; a restore its target refused does not displace the last one.
  if (safety) {
    await writeLastSafety(engine, safety);
  }
  // The journal names the temp files and new directories this run may leave, so the next run
  // removes them if this process dies half-way (and `doctor` reports the interrupted restore).
  const journal = journalFile(engine.paths);
  const record: RestoreJournal = {
    pid: process.pid,
    safety,
    startedAt: isoFromMillis(Date.now()),
    token: randomHex(5),
    ...journalDirs(engine.root, steps),
    ...(run.interruptedHint ? { hint: run.interruptedHint } : {}),
    ...(run.interruptedRedo ? { redo: true as const } : {}),
  };
  await writeFileAtomic(journal, JSON.stringify(record));
  // The journal and last-safety.json are fsynced; their directory entries must be too before the
  // first file changes, so `doctor` can name the way back after a crash.
  await syncDirs([engine.paths.dir, path.dirname(journal)]);
  trace("restore: journal on disk");
  try {
    if (run.beforeApply && safety) await run.beforeApply(steps, safety);
    const outcome = await applyPlan(
      engine.root,
      steps,
      (oid) => contents.get(oid)!,
      record.token,
      new Set(capturedRepos),
    );
    trace("restore: files written and flushed");
    await settleEarlierInterrupted(engine.paths, record.startedAt);
    return { ...outcome, safety, ...(head ? { head } : {}) };
  } finally {
    await fs.rm(journal, { force: true });
  }
}

type PreparedRestore =
  | { kind: "dry-run"; result: RestoreResult }
  | { kind: "apply"; steps: PlanStep[]; contents: Map<string, Buffer> };

/** The target, the plan and every blob it writes: read-only, so it may overlap the safety flush. */
async function prepareRestore(
  engine: StoreContext,
  cat: CatFile,
  run: RestoreRun,
  currentTree: string,
  capturedRepos: readonly RelPath[],
  /** What the capture of the current state left out. */
  currentExcluded: readonly StoredExclusion[],
): Promise<PreparedRestore> {
  const target = await run.target(currentTree, capturedRepos);
  const ghostignore = await workspaceGhostignore(
    engine.location,
    engine.paths.dir,
    await ignoresCase(engine.location, engine.paths.dir),
  );
  const unreadableNow = new Set(currentExcluded.flatMap((e) => (e.reason === "unreadable" ? [e.path] : [])));
  const presentUncaptured = await presentUncapturedOf(engine.root, target.changes, unreadableNow);
  const unseen = await skipUnseenEdits(
    engine.root,
    engine.location.worktreeRoot ?? null,
    engine.location.prefix,
    planRestore({
      changes: target.changes,
      provenAbsent: target.provenAbsent,
      presentUncaptured,
      untouchable: (p) => ghostignoreMatch(p, ghostignore?.matcher ?? null) !== null,
    }),
    target.changes,
  );
  const planned = await skipOutsideSparseCheckout(engine, unseen, target.changes);
  // Each blob is read once: the size check below and the writes share the answers.
  const blobs = new Map<string, ReturnType<CatFile["read"]>>();
  const readBlob = (oid: string) => {
    if (!blobs.has(oid)) blobs.set(oid, cat.read(oid));
    return blobs.get(oid)!;
  };
  const kept = await skipExcludedNow(
    engine,
    planned,
    target.changes,
    run.includes,
    capturedRepos,
    async (oid) => (await readBlob(oid))?.content.length ?? 0,
  );
  const guarded = await keepGuardingGhostignores(engine, cat, kept, currentExcluded);
  const unblocked = skipBlockedWrites(
    engine.root,
    (target.outside ?? []).concat(guarded),
    new Set(capturedRepos),
  );
  const steps = skipUnwritable(engine.root, unblocked);

  if (run.dryRun) {
    // As the restore itself would: a blob it needs that the store lacks fails it (no content read).
    const wanted = [...new Set(steps.flatMap((s) => (s.kind === "write" ? [s.state.oid] : [])))];
    const missing = await missingObjects(wanted, { cwd: engine.paths.dir, env: engine.readEnv });
    if (missing.length > 0) throw missingObjectError(missing[0], "; nothing was changed");
    const result: RestoreResult = {
      written: steps.filter((s) => s.kind === "write").map((s) => s.path),
      deleted: steps.filter((s) => s.kind === "delete").map((s) => s.path),
      skipped: steps.flatMap((s) => (s.kind === "skip" ? [plannedSkip(s)] : [])),
      safety: null,
    };
    return { kind: "dry-run", result };
  }
  run.refusePlan?.(steps);
  stopIfCancelled(run.signal);
  // Read everything first: a damaged store fails here, before any file changes.
  // All requests go to cat-file at once (it answers in order): one round trip per blob would
  // make a large restore wait on the pipe, and widen the window in which it can be interrupted.
  const contents = new Map<string, Buffer>();
  const oids = [...new Set(steps.flatMap((s) => (s.kind === "write" ? [s.state.oid] : [])))];
  const objects = await Promise.all(oids.map(readBlob));
  oids.forEach((oid, i) => {
    const object = objects[i];
    if (object?.type !== "blob") {
      throw missingObjectError(oid, "; nothing was changed");
    }
    contents.set(oid, object.content);
  });
  // The last moment nothing has changed: the safety snapshot goes, as for a refusal.
  stopIfCancelled(run.signal);
  return { kind: "apply", steps, contents };
}

export type { Captured };
