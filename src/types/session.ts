// Sessions and turns: what the session handle takes and reports.

import type { HeadMoved, SkippedPath } from "../types.js";

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
  /**
   * A `rewound` turn whose rewind was cut off (killed, or files it could not write): some of its
   * files may be back, others not; running the rewind again finishes it, redo undoes it.
   */
  rewindUnfinished?: true;
  startedAt: string;
  endedAt?: string;
  /**
   * An open turn whose conversation ended before it did (an interrupt, then the agent's
   * SessionEnd: `abandonTurn`): when. It runs no more, so rewinding it needs no force; its changes
   * are taken when the next prompt ends it, or by the rewind.
   */
  abandonedAt?: string;
  /** Changed paths the turn may not have changed itself (an interrupt, an overlapping session): rewinding them needs force. */
  uncertain?: string[];
  /** How many prompts just before this turn never began theirs (their hooks were stopped before the snapshot): their work is in no turn. */
  unbegunBefore?: number;
  /**
   * Set (by `log({ gone: true })`) when a snapshot of the turn, before or after, is no longer in
   * the store (expired by retention, or dropped): rewinding to it, or to an earlier turn, fails.
   */
  gone?: true;
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
  /**
   * What a dry run of this rewind showed the user (its `rewoundTurns`, `written`, `deleted`,
   * `overridden`): the rewind is refused (`plan-changed`, nothing changed) unless it would do
   * exactly that. Checked
   * under the session's lock just before the first file changes, so a turn that ends, or a file
   * that changes, between the preview and the confirmation cannot slip into the rewind.
   */
  expect?: ExpectedRewind;
  /** Aborted before the first file is written: nothing changes (`cancelled`). Once writing began, it finishes. */
  signal?: AbortSignal;
}

export interface ExpectedRewind {
  rewoundTurns: string[];
  /** Left out: not compared. */
  written?: string[];
  deleted?: string[];
  /** The conflicts a forced rewind would overwrite. Left out: none (as a dry run's report leaves it out). */
  overridden?: string[];
  /** What the dry run said each of them held (`overriddenState`): one edited since is refused. Left out: not compared. */
  overriddenState?: Record<string, string>;
}

export interface RewindReport {
  session: string;
  to: string;
  rewoundTurns: string[];
  /** Set when the rewind was limited to these paths (its turns stay `done`). */
  paths?: string[];
  /** With `force`: the conflicts it overwrote (would, in a dry run), edited since or uncertain. */
  overridden?: string[];
  /** A dry run's: what each `overridden` file holds now (`mode oid`, or `absent`), for `expect`. */
  overriddenState?: Record<string, string>;
  /** Set when this run finished a rewind that was killed half-way (the same one, run again). */
  resumed?: true;
  written: string[];
  deleted: string[];
  skipped: SkippedPath[];
  safety: string | null;
  /** Git's HEAD moved since the files went back to were captured (see HeadMoved). */
  head?: HeadMoved;
  dryRun?: boolean;
}

export interface RedoReport {
  session: string;
  restoredTurns: string[];
  /**
   * With `force`: the files it overwrote (would, in a dry run) although they were changed since
   * the rewind; the redo's safety snapshot holds them as they were.
   */
  overridden?: string[];
  /** A dry run's: what each `overridden` file holds now, for `expect`. */
  overriddenState?: Record<string, string>;
  written: string[];
  deleted: string[];
  skipped: SkippedPath[];
  /** The safety snapshot redo took first (null for a dry run). */
  safety: string | null;
  /** Git's HEAD moved since the files went back to were captured (see HeadMoved). */
  head?: HeadMoved;
  dryRun?: boolean;
}

/** The result of beginning a turn. */
export interface TurnBegun {
  session: string;
  turn: string;
  before: string;
  /** How many of the session's `beginTurn`s just before this one never finished (killed, or failed): their prompts' work is in no turn. */
  unbegunBefore?: number;
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
  /**
   * Snapshot after turn `turn` (default: the open one) and record its changed paths.
   * `everyToolMarked`: `progress` was called after each of the agent's tool calls that can change
   * files, so a change made since the turn's last mark, to a path no tool call of the turn named
   * (`touched`), is no tool call's (a person's edit while the agent answered): it is uncertain,
   * and rewinding it needs `force`.
   */
  endTurn(turn?: string, options?: { everyToolMarked?: boolean }): Promise<TurnEnded>;
  /**
   * Marks paths as agent-touched (captured even if ignored). Paths are relative to the workspace or
   * absolute. `continuing`: the agent's own tool call; with no turn open, it continues the latest
   * turn, whose stop another hook blocked (no prompt came since, not even one whose `beginTurn`
   * never finished: a killed prompt hook), as that turn's work.
   * `leftOut`: those in a nested repository or submodule, which this workspace's snapshots leave
   * out (unless `"nestedRepos": "capture"`): no snapshot holds them. `ghostignored`: those a
   * `.ghostignore` names, kept out of every snapshot all the same. `outsideTurn`: no turn was
   * open (nor continued), so no turn's rewind undoes the edit; `unbegunPrompt` with it: a prompt
   * came whose `beginTurn` never finished (the edit is its work, which no turn holds). `mark`:
   * takes the tool call's progress mark of `paths` in the same step, as `progress(paths)` right
   * after would: "after" the tool ran, "before" it runs (`progress(paths, { unwritten: true })`:
   * what they hold now is not its work). `hooksBeside`: as for `progress`.
   */
  touched(
    paths: string[],
    options?: { edited?: boolean; continuing?: boolean; mark?: "before" | "after"; hooksBeside?: boolean },
  ): Promise<TouchResult>;
  /**
   * A progress mark: records what the open turn changed so far (only `paths` when given), so
   * changes made after the agent stopped (an interrupt) are not taken for the turn's.
   * `hooksBeside`: the agent runs other hooks after the tool call beside this one (a formatter), so a
   * rewrite of `paths` in the seconds after the mark, before the next call, is the tool call's;
   * without it such a change is uncertain (a person's save, perhaps).
   * `continuing`: as for `touched`. `unwritten`: the edit tool that named `paths` failed without
   * writing them (Claude Code's PostToolUseFailure of Edit), so what they show is not its work.
   */
  progress(
    paths?: string[],
    options?: { continuing?: boolean; unwritten?: boolean; hooksBeside?: boolean },
  ): Promise<void>;
  /**
   * A stop after a blocked stop: the latest turn's end moves here. Null with no turn to end.
   * `prompt`: the prompt the stop answers; an open turn begun by the agent's retry (another prompt)
   * right after the done turn of that prompt becomes part of it. `everyToolMarked`: as for
   * `endTurn`; a change since the blocked stop that no tool call made is uncertain too.
   */
  extendTurn(options?: { prompt?: string; everyToolMarked?: boolean }): Promise<TurnEnded | null>;
  /**
   * The agent's conversation ended (cleared, exited) with a turn open, as after an interrupt: no
   * snapshot, but other sessions' later turns no longer count it as running beside them. Returns
   * that turn's id, or null when none was open. Also the stop of a prompt whose `beginTurn` never
   * finished: until then, other sessions' turns count its edits as this agent's.
   */
  abandonTurn(): Promise<string | null>;
  /** Files back to the state before turn `to`. */
  rewind(options: RewindOptions): Promise<RewindReport>;
  /** Undoes the last rewind (again: the one before it; a new turn discards them). */
  redo(options?: RedoOptions): Promise<RedoReport>;
  /** The turns the next `redo` brings back (null: nothing to redo); reads the journal only. */
  nextRedo(): Promise<string[] | null>;
  /**
   * The paths the next `redo` brings back when the rewind it undoes was limited to some paths
   * (null: it brings back whole turns, or there is nothing to redo); reads the journal only.
   */
  nextRedoPaths(): Promise<string[] | null>;
  /** Turns, oldest first; with `gone`, those whose snapshots are gone say so (one read of the store's refs). */
  log(options?: { gone?: boolean }): Promise<TurnRecord[]>;
  /** The id of the turn begun and not ended, or null. */
  openTurn(): Promise<string | null>;
}

export interface RedoOptions {
  dryRun?: boolean;
  /** Overwrite paths changed since the rewind. */
  force?: boolean;
  /**
   * The caller is the agent working in the session's open turn (it was asked to redo): the rewinds
   * that turn's beginning discarded can still be undone while the turn has changed nothing.
   */
  keepOpenTurn?: boolean;
  /**
   * The redo the user was shown (the turns it brings back, as `nextRedo` or a dry run's
   * `restoredTurns` said, and optionally a dry run's files): refused (`plan-changed`, nothing
   * changed) when the session's last rewind is now another one, checked under the session's lock
   * before anything changes, or when it would now write, delete or overwrite other files, checked
   * just before the first file changes.
   */
  expect?: ExpectedRedo;
  /** As for a rewind: aborted before the first file is written, nothing changes. */
  signal?: AbortSignal;
}

export interface ExpectedRedo {
  restoredTurns: string[];
  /** A dry run's files (left out: not compared), as for `ExpectedRewind`. */
  written?: string[];
  deleted?: string[];
  /**
   * The conflicts a forced redo was shown to overwrite (left out: none): a forced redo that would
   * now overwrite others (a file edited after the refusal was shown) is refused, `plan-changed`.
   */
  overridden?: string[];
  /** What the dry run said each of them held: one edited since is refused. Left out: not compared. */
  overriddenState?: Record<string, string>;
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
  /** A rewind cut off before it finished: `files` are those it planned, some of them not yet back. */
  unfinished?: true;
}

/** What `touched` did (see `SessionHandle.touched`). */
export interface TouchResult {
  touched: string[];
  leftOut?: string[];
  ghostignored?: string[];
  outsideTurn?: true;
  unbegunPrompt?: true;
}
