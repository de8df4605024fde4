import { randomHex } from "../util/crypto.js";
import { captureTree, writeUnpublishedSnapshot } from "../capture/snapshot.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Captured } from "../capture/context.js";
import { loadGhostignore } from "../capture/ghostignore.js";
import { ignoresCase } from "../capture/conversion.js";
import { ghostignoreMatch } from "../capture/policy.js";
import type { FileState } from "../git/trees.js";
import type { StoreContext } from "../store/context.js";
import { GhostcommitError } from "../errors.js";
import type { CatFile } from "../git/cat-file.js";
import { runGit } from "../git/exec.js";
import { MODE } from "../git/objects.js";
import { DIFF_TREE, isAbsentMode, parseRawDiff, parseStdinDiff, type RawChange } from "../git/diff-tree.js";
import { displayPath, type RelPath } from "../paths.js";
import type { RestoreReport } from "../types.js";
import {
  journalFile,
  type RestoreJournal,
  settleEarlierInterrupted,
  journalDirs,
} from "../store/restore-journal.js";
import { STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { syncDirs } from "../util/durable.js";
import { withLock } from "../util/lock.js";
import { settledWith } from "../util/settled.js";
import { trace } from "../util/trace.js";
import type { StoredSnapshot } from "../store/store.js";
import { type ApplyOutcome, applyPlan } from "./apply.js";
import { ignoredAtTarget, ignoreScope } from "./ignored-at-target.js";
import { selectNamed } from "./path-filter.js";
import { presentUncapturedOf, skipUnseenEdits } from "./unseen-edits.js";
import { skipExcludedNow } from "./excluded-now.js";
import { type PathChange, type PlanStep, planRestore, proveAbsent } from "./plan.js";
import { isoFromMillis } from "../util/format.js";

/** What the caller wants restored, computed once the current state (the safety tree) is known. */
export interface RestoreTarget {
  changes: PathChange[];
  provenAbsent: Set<RelPath>;
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
   * Runs once the way back is on disk, before the first file changes: a caller that must be able
   * to resume or undo a restore killed half-way records its plan here.
   */
  beforeApply?: (steps: PlanStep[], safety: string) => Promise<void>;
  /** How to finish or undo this restore if it dies half-way, for `doctor` (a sentence). */
  interruptedHint?: string;
}

export interface RestoreResult extends ApplyOutcome {
  safety: string | null;
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
  return withLock(path.join(engine.paths.dir, STORE_FILES.restoreLock), () =>
    restoreLocked(engine, cat, run),
  );
}

async function restoreLocked(engine: StoreContext, cat: CatFile, run: RestoreRun): Promise<RestoreResult> {
  let currentTree: string;
  let safety: string | null = null;
  let capturedRepos: RelPath[] = [];
  let published: Promise<void> = Promise.resolve();
  if (run.dryRun) {
    const captured = await captureTree(engine, cat, run.includes);
    currentTree = captured.tree;
    capturedRepos = captured.nested ?? [];
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
  }
  const prepared = await settledWith(published, prepareRestore(engine, cat, run, currentTree, capturedRepos));
  if (prepared.kind === "dry-run") return prepared.result;
  const { steps, contents } = prepared;
  trace("restore: planned, way back on disk");
  // Protected from retention from now on; a restore its target refused does not displace the last one.
  if (safety) {
    await writeFileAtomic(
      path.join(engine.paths.dir, STORE_FILES.lastSafety),
      JSON.stringify({ id: safety }),
    );
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
    return { ...outcome, safety };
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
): Promise<PreparedRestore> {
  const target = await run.target(currentTree, capturedRepos);
  const ghostignore = await loadGhostignore(
    engine.root,
    await ignoresCase(engine.location, engine.paths.dir),
  );
  const presentUncaptured = await presentUncapturedOf(engine.root, target.changes);
  const planned = await skipUnseenEdits(
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
  // Each blob is read once: the size check below and the writes share the answers.
  const blobs = new Map<string, ReturnType<CatFile["read"]>>();
  const readBlob = (oid: string) => {
    if (!blobs.has(oid)) blobs.set(oid, cat.read(oid));
    return blobs.get(oid)!;
  };
  const steps = await skipExcludedNow(
    engine,
    planned,
    target.changes,
    run.includes,
    async (oid) => (await readBlob(oid))?.content.length ?? 0,
  );
  if (run.dryRun) {
    const result: RestoreResult = {
      written: steps.filter((s) => s.kind === "write").map((s) => s.path),
      deleted: steps.filter((s) => s.kind === "delete").map((s) => s.path),
      skipped: steps.flatMap((s) => (s.kind === "skip" ? [{ path: s.path, reason: s.reason }] : [])),
      safety: null,
    };
    return { kind: "dry-run", result };
  }
  // Read everything first: a damaged store fails here, before any file changes.
  // All requests go to cat-file at once (it answers in order): one round trip per blob would
  // make a large restore wait on the pipe, and widen the window in which it can be interrupted.
  const contents = new Map<string, Buffer>();
  const oids = [...new Set(steps.flatMap((s) => (s.kind === "write" ? [s.state.oid] : [])))];
  const objects = await Promise.all(oids.map(readBlob));
  oids.forEach((oid, i) => {
    const object = objects[i];
    if (object?.type !== "blob") {
      throw new GhostcommitError("store-damaged", `the store is missing object ${oid}; nothing was changed`, {
        oid,
      });
    }
    contents.set(oid, object.content);
  });
  return { kind: "apply", steps, contents };
}

/** A path that could not be written (SPEC §4: the only skips that make the status 1). */
export function hardSkips(report: { skipped: RestoreReport["skipped"] }): boolean {
  return report.skipped.some((s) => s.reason === "permission" || s.reason === "io");
}

/** A restore's outcome as people and JSON see it: display paths instead of raw bytes. */
export function displayOutcome(result: RestoreResult): RestoreReport {
  return {
    written: result.written.map(displayPath),
    deleted: result.deleted.map(displayPath),
    skipped: result.skipped.map((s) => ({ path: displayPath(s.path), reason: s.reason })),
    safety: result.safety,
  };
}

/**
 * Raw diff between two trees (proportional to what changed): by the `diff-tree` made ready for
 * this command (`prepareDiff`) where there is one.
 */
export async function diffTrees(engine: StoreContext, from: string, to: string): Promise<RawChange[]> {
  const ahead = engine.takeDiffAhead();
  if (ahead) {
    const { stdout, stderr } = await ahead.run(`${from} ${to}\n`);
    return parseStdinDiff(stdout, from, to, stderr);
  }
  const result = await runGit([...DIFF_TREE, from, to], { cwd: engine.paths.dir, env: engine.readEnv });
  return parseRawDiff(result.stdout);
}

function stateOf(mode: string, oid: string): FileState | null {
  return isAbsentMode(mode) ? null : { mode, oid };
}

/** `restore ID`: make the capture set equal to the snapshot. */
export async function restoreSnapshot(
  engine: StoreContext,
  cat: CatFile,
  target: StoredSnapshot,
  dryRun: boolean,
  named?: RelPath[],
): Promise<RestoreResult> {
  engine.prepareDiff(); // its target is the diff from what is there now
  return runRestore(engine, cat, {
    includes: target.meta.included,
    dryRun,
    safetyMessage: `before restoring ${target.id.slice(0, 12)}`,
    guards: target.id,
    target: async (currentTree, capturedRepos) => {
      const raw = await diffTrees(engine, currentTree, target.tree);
      const all: PathChange[] = raw.map((c) => ({
        path: c.path,
        current: stateOf(c.oldMode, c.oldOid),
        target: stateOf(c.newMode, c.newOid),
      }));
      const changes = selectNamed(all, named);
      // A gitlink (a repository nested there) is no file: it proves nothing about paths below it.
      const filesInTarget = new Set(
        changes.filter((c) => c.target && c.target.mode !== MODE.gitlink).map((c) => c.path),
      );
      const candidates = changes.filter((c) => c.current && !c.target).map((c) => c.path);
      const ignored = await ignoredAtTarget(
        cat,
        target.tree,
        candidates,
        new Set(all.map((c) => c.path)),
        ignoreScope(engine.location.kind, target.meta.nested),
        () => ignoresCase(engine.location, engine.paths.dir),
      );
      // Nor was a repository there looked into (a submodule or nested repository not captured then).
      const reposInTarget = changes.filter((c) => c.target?.mode === MODE.gitlink).map((c) => c.path);
      // A repository captured now that the snapshot did not look into (made or cloned since): its
      // absence then proves nothing a person would want deleted, and its .git stays either way.
      const lookedInto = new Set(target.meta.nested ?? []);
      const reposSince = capturedRepos.filter((r) => !lookedInto.has(r));
      const provenAbsent = proveAbsent(
        candidates,
        filesInTarget,
        [...target.meta.excluded.map((e) => e.path), ...reposInTarget, ...reposSince],
        (p) => ignored.has(p),
      );
      return { changes, provenAbsent };
    },
  });
}

export type { Captured };
