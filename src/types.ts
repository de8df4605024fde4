import type { StoreKind } from "./config.js";

/** Why a path seen in the workspace was not captured. */
export type ExclusionReason =
  | "dependency-dir"
  | "large-file"
  | "large-dir"
  | "ignore-file"
  | "nested-repo"
  | "budget"
  | "unreadable"
  | "store";

/** A path left out of a snapshot, with totals for a directory. Paths are workspace-relative, '/'-separated. */
export interface Excluded {
  path: string;
  reason: ExclusionReason;
  bytes?: number;
  files?: number;
}

/** What a snapshot is for; safety snapshots guard a restore, turn snapshots bracket an agent turn. */
export type SnapshotKind = "snapshot" | "safety" | "turn-before" | "turn-after";

/** A listed snapshot. */
export interface SnapshotSummary {
  id: string;
  createdAt: string;
  message: string;
  kind: SnapshotKind;
  session?: string;
  turn?: string;
}

/** The result of taking a snapshot. */
export interface Snapshot extends SnapshotSummary {
  /** The HEAD commit when it was taken, or null (plain directory, unborn branch). */
  parent: string | null;
  fileCount: number;
  excluded: Excluded[];
}

/** A snapshot just taken. */
export interface SnapshotTaken extends Snapshot {
  /** The `include` paths with nothing on disk (a typo, a pattern, which is not expanded): no error, said here. */
  missingIncludes?: string[];
}

/** One snapshot in full. */
export interface SnapshotDetails extends Snapshot {
  files: string[];
}

export type DiffStatus = "added" | "modified" | "deleted" | "type-changed";

export interface DiffEntry {
  path: string;
  status: DiffStatus;
  oldMode?: string;
  newMode?: string;
}

/** `not-captured`: a rewind cannot know the path's earlier state (the agent reported the edit after it). */
export type SkipReason = "permission" | "io" | "excluded" | "not-captured";

/**
 * Why an `excluded` path was left where the target and the safety snapshot both hold it:
 * `submodule` (a restore never checks out a submodule's commit), `local-edit` (its bytes on disk
 * are an edit git does not show, assume-unchanged or skip-worktree, or one made while the restore
 * ran), `sparse-checkout` (outside the sparse checkout, not on disk). Absent: the target or the
 * safety snapshot lacks it (ignored, excluded, in the way). `guards-files`: a `.ghostignore` whose
 * rules keep files on disk out of snapshots that its restored version would let in.
 */
export type ExcludedDetail =
  | "submodule"
  | "local-edit"
  | "sparse-checkout"
  | "unreadable"
  | "in-the-way"
  | "ghostignore"
  | "guards-files";

/** A path a restore, rewind or redo left as it was. */
export interface SkippedPath {
  path: string;
  reason: SkipReason;
  /** With `excluded`: why, where it is not that a snapshot lacks the path. */
  detail?: ExcludedDetail;
  /** Where the file system refused the write or deletion: its code (ENOSPC, EACCES, EIO…). */
  errno?: string;
  /** A rewind's `permission` skip: the snapshot holding what it wanted there (`restore FROM -- PATH`). */
  from?: string;
}

/** What a restore changed (or, with dryRun, would change). */
export interface RestoreReport {
  written: string[];
  deleted: string[];
  skipped: SkippedPath[];
  /** The safety snapshot taken first (null for a dry run). */
  safety: string | null;
  dryRun?: boolean;
  /** Git's HEAD is no longer the commit it was when the files restored to were captured. */
  head?: HeadMoved;
}

/**
 * Git's HEAD then (when the state restored to was captured) and now: a restore puts back files
 * only, so commits made since, a switched branch, staged changes or a merge under way stay as git
 * has them.
 */
export interface HeadMoved {
  atCapture: string;
  /** null: no commit (an unborn branch). */
  now: string | null;
  /** The branch checked out now (null: a detached HEAD). */
  branch: string | null;
  /** The branches whose tip is that commit now (not necessarily the one HEAD was on then). */
  branchesThere: string[];
}

export interface SnapshotOptions {
  message?: string;
  /** Paths (relative to the workspace) to capture even if ignored; directories include their files. */
  include?: string[];
}

export interface RestoreOptions {
  dryRun?: boolean;
  /** Only these paths (relative to the workspace; a directory names everything below it). */
  paths?: string[];
  /** Aborted before the first file is written: nothing changes (`cancelled`). Once writing began, it finishes. */
  signal?: AbortSignal;
}

export interface DiffOptions {
  /** Only these paths (relative to the workspace; a directory names everything below it). */
  paths?: string[];
}

export interface GcOptions {
  /** Expire snapshots older than this many milliseconds. */
  olderThanMs?: number;
  /** Keep at most this many snapshots (newest first). */
  keep?: number;
}

export interface GcReport {
  dropped: string[];
  kept: string[];
  bytesBefore: number;
  bytesAfter: number;
  /**
   * Set when the store stays over `maxStoreBytes`: what is over it is needed by the snapshots
   * kept (protected ones, or `unprotectedLeft` whose drop would free nothing), so no more went.
   */
  overCap?: { maxBytes: number; unprotectedLeft: number };
  /**
   * Sessions forgotten (their journals removed): every snapshot they named is gone, and they were
   * last active longer ago than `retentionDays`.
   */
  forgottenSessions: number;
}

/** What `doctor` can find wrong. */
export type DoctorProblemCode =
  | "git-too-old"
  | "bad-git-config"
  | "borrowed-unprotected"
  | "bad-snapshot"
  | "missing-objects"
  | "damaged-state-file"
  | "damaged-plain-index"
  | "stale-lock"
  | "interrupted-restore"
  | "unfinished-rewind"
  | "hook-errors"
  | "hook-command-broken"
  | "hook-install-outdated"
  | "hook-installed-twice"
  | "hook-switched-off"
  | "push-failed"
  | "push-setting-ignored"
  | "push-refs-left"
  | "data-dir-unusable"
  | "store-not-writable"
  | "damaged-store"
  | "leftover-fetch-refs"
  | "leftover-temp-pack"
  | "lost-safety-snapshot"
  | "store-over-cap"
  | "gone-workspace-refs"
  | "damaged-ref"
  | "damaged-object"
  | "unindexed-pack"
  | "damaged-pack"
  | "dangling-session-ref";

/** What `doctor --repair` can do about it. */
export type DoctorRepairCode =
  | "removed-leftover"
  | "removed-stale-lock"
  | "acknowledged-interrupted-restore"
  | "dropped-damaged-snapshot"
  | "reset-state-file"
  | "reset-plain-index"
  | "rewrote-store-frame"
  | "removed-fetch-refs"
  | "rewrote-damaged-ref"
  | "removed-damaged-ref"
  | "removed-damaged-object"
  | "reindexed-pack"
  | "removed-damaged-pack"
  | "removed-dangling-session-ref";

export interface DoctorProblem {
  code: DoctorProblemCode;
  message: string;
  path?: string;
}

export interface DoctorRepair {
  code: DoctorRepairCode;
  message: string;
  path?: string;
}

/** Whether status asks Watchman what changed (git's fsmonitor protocol), and why (not). */
export interface WatchmanUse {
  inUse: boolean;
  reason: string;
  /**
   * A watch ghostcommit started, which outlives it: `"watchman": false`, then `watchman watch-del
   * ROOT`, stops it (watch-del alone is undone by the next snapshot).
   */
  startedWatch?: string;
}

export interface DoctorReport {
  ok: boolean;
  problems: DoctorProblem[];
  /** With `repair`: what was fixed, one entry per action. */
  repaired?: DoctorRepair[];
  gitVersion?: string;
  store?: string;
  watchman?: WatchmanUse;
}

export interface OpenOptions {
  /** The workspace directory (default: process.cwd()). */
  cwd?: string;
  store?: StoreKind;
}

export type * from "./types/remote.js";
export type * from "./types/session.js";
