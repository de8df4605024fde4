import type { StoreKind } from "./config.js";

/** Why a path seen in the workspace was not captured. */
export type ExclusionReason =
  | "dependency-dir"
  | "large-file"
  | "large-dir"
  | "ignore-file"
  | "nested-repo"
  | "budget"
  | "unreadable";

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

/** What a restore changed (or, with dryRun, would change). */
export interface RestoreReport {
  written: string[];
  deleted: string[];
  skipped: { path: string; reason: SkipReason }[];
  /** The safety snapshot taken first (null for a dry run). */
  safety: string | null;
  dryRun?: boolean;
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
}

/** What `doctor` can find wrong. */
export type DoctorProblemCode =
  | "git-too-old"
  | "borrowed-unprotected"
  | "bad-snapshot"
  | "missing-objects"
  | "damaged-state-file"
  | "damaged-plain-index"
  | "stale-lock"
  | "interrupted-restore"
  | "hook-errors"
  | "hook-command-broken"
  | "push-failed";

/** What `doctor --repair` can do about it. */
export type DoctorRepairCode =
  | "removed-leftover"
  | "removed-stale-lock"
  | "acknowledged-interrupted-restore"
  | "dropped-damaged-snapshot"
  | "reset-state-file"
  | "reset-plain-index";

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

export interface DoctorReport {
  ok: boolean;
  problems: DoctorProblem[];
  /** With `repair`: what was fixed, one entry per action. */
  repaired?: DoctorRepair[];
  gitVersion?: string;
  store?: string;
}

export interface OpenOptions {
  /** The workspace directory (default: process.cwd()). */
  cwd?: string;
  store?: StoreKind;
}

/** A turn as the session journal knows it. */
export interface TurnRecord {
  turn: string;
  prompt: string;
  before: string;
  after: string | null;
  changed: string[];
  state: "open" | "done" | "rewound";
  /** Paths of a `done` turn put back by a rewind limited to some paths (not redone since). */
  rewoundPaths?: string[];
  startedAt: string;
  endedAt?: string;
  /** Changed paths the turn may not have changed itself (an interrupt, an overlapping session): rewinding them needs force. */
  uncertain?: string[];
}

export interface SessionSummary {
  session: string;
  turns: number;
  updatedAt: string;
  /** Set for a session brought in by `fetch`: the remote and the machine that pushed it. */
  origin?: SessionOrigin;
}

export interface SessionOrigin {
  remote: string;
  host: string;
  fetchedAt: string;
}

export interface PushOptions {
  /** A remote name of the repository (default `origin`), a URL or a path. */
  remote?: string;
  /** Only these sessions (default: every session). */
  sessions?: string[];
  /** Plain snapshots (not part of a session) too. */
  snapshots?: boolean;
  /** Send snapshots that hold files the repository ignores (refused by default). */
  includeIgnored?: boolean;
}

export interface PushReport {
  remote: string;
  url: string;
  /** Sessions whose journal was sent (new on the remote, or grown since the last push). */
  sessions: { session: string; turns: number; status: "created" | "updated" }[];
  /** Sessions already up to date on the remote. */
  unchanged: string[];
  /** Snapshots sent (already there ones are not sent again). */
  snapshots: string[];
  /** Remote refs created or updated, in one atomic transaction. */
  refs: number;
  /** Approximate size (as stored) of the objects sent. */
  bytes: number;
}

export interface FetchOptions {
  /** A remote name of the repository (default `origin`), a URL or a path. */
  remote?: string;
}

export interface FetchReport {
  remote: string;
  url: string;
  /** Sessions whose journal was written here: new, or grown on the remote. */
  sessions: { session: string; turns: number; status: "created" | "updated" }[];
  unchanged: string[];
  /** Sessions kept as they are here because this workspace has a different history under the same id. */
  conflicts: { session: string; reason: string }[];
  /** Snapshots that were not in this store before. */
  snapshots: string[];
  /** Size of the packs received. */
  bytes: number;
}

export interface RewindOptions {
  /** Rewind to the state before this turn (it and every later turn are undone). */
  to: string;
  dryRun?: boolean;
  force?: boolean;
  /** Only these paths (relative to the workspace; a directory names everything below it). */
  paths?: string[];
  /**
   * The caller is the agent working in the session's open turn (it was asked to undo): rewind the
   * turns before the open one and leave it open; paths it already changed count as conflicts.
   * Without it, an open turn refuses the rewind (`open-turn`) unless forced.
   */
  keepOpenTurn?: boolean;
}

export interface RewindReport {
  session: string;
  to: string;
  rewoundTurns: string[];
  /** Set when the rewind was limited to these paths (its turns stay `done`). */
  paths?: string[];
  written: string[];
  deleted: string[];
  skipped: { path: string; reason: SkipReason }[];
  safety: string | null;
  dryRun?: boolean;
}

export interface RedoReport {
  session: string;
  restoredTurns: string[];
  written: string[];
  deleted: string[];
  skipped: { path: string; reason: SkipReason }[];
  /** The safety snapshot redo took first (null for a dry run). */
  safety?: string | null;
  dryRun?: boolean;
}

/** The result of beginning a turn. */
export interface TurnBegun {
  session: string;
  turn: string;
  before: string;
}

/** The result of ending a turn. */
export interface TurnEnded {
  session: string;
  turn: string;
  after: string;
  changed: string[];
}

/** One agent conversation in a workspace: its turns, rewind and redo. */
export interface SessionHandle {
  readonly id: string;
  /** Snapshot before turn `turn`; ends a still-open turn of this session first. */
  beginTurn(turn: string, options?: { prompt?: string }): Promise<TurnBegun>;
  /** Snapshot after turn `turn` and record its changed paths. */
  endTurn(turn: string): Promise<TurnEnded>;
  /** Marks paths as agent-touched (captured even if ignored). Paths are relative to the workspace or absolute. */
  touched(paths: string[], options?: { edited?: boolean }): Promise<{ touched: string[] }>;
  /**
   * A progress mark: records what the open turn changed so far (only `paths` when given), so
   * changes made after the agent stopped (an interrupt) are not taken for the turn's.
   */
  progress(paths?: string[]): Promise<void>;
  /** A stop after a blocked stop: the latest turn's end moves here. Null with no turn to end. */
  extendTurn(): Promise<TurnEnded | null>;
  /** Files back to the state before turn `to`. */
  rewind(options: RewindOptions): Promise<RewindReport>;
  /** Undoes the last rewind (again: the one before it; a new turn discards them). */
  redo(options?: RedoOptions): Promise<RedoReport>;
  /** Turns, oldest first. */
  log(): Promise<TurnRecord[]>;
  /** The id of the turn begun and not ended, or null. */
  openTurn(): Promise<string | null>;
}

export interface RedoOptions {
  dryRun?: boolean;
  /** Overwrite paths changed since the rewind. */
  force?: boolean;
}

/** A rewind or redo, as the model should hear of it. */
export interface UndoEvent {
  kind: "rewind" | "redo";
  /** The turns that went back (rewind) or came back (redo). */
  turns: string[];
  /** Every file it changed, workspace-relative, sorted. */
  files: string[];
  /** Those of them it deleted (known for a rewind; a redo's are in `files` only). */
  deleted: string[];
}
