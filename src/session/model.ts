import { markOf, type ProgressMark } from "./writer-marks.js";
import type { RelPath } from "../paths.js";
import { foldContinuation, newTurn, promptArrived, ranNoLonger, reopenTurn } from "./continuation.js";
import * as innerUndos from "./inner-undos.js";

/**
 * The session journal: one JSON record per line, appended. Records are facts ("turn 3 began with
 * before-snapshot X"); the session's state is their fold, so a record that never made it to disk
 * (a killed process) simply did not happen. Paths are RelPaths (binary strings), JSON-exact.
 */
export type JournalRecord =
  | { e: "session"; session: string; t: number }
  | { e: "begin"; turn: string; prompt: string; before: string; t: number }
  | { e: "prompt"; turn: string; t: number } // written before its turn's snapshot: see `promptArrived`
  | {
      e: "touch";
      /** The open turn the touch happened in, or null between turns. */
      turn: string | null;
      /** The paths as given (resolved), kept for every later snapshot of the session. */
      paths: RelPath[];
      /** The files they named when touched (directories expanded): attributed to `turn`. */
      files: RelPath[];
      /** A replacement before-snapshot holding touched paths the original did not look at. */
      before?: string;
      /** Touched paths the turn's before-state now proves absent. */
      absent?: RelPath[];
      /** Paths reported only after the edit that the before snapshot did not hold: their before-state is lost. */
      unknown?: RelPath[];
      /** Reported after the edit (Cursor): what the file held just before it is unknown. */
      edited?: true;
      t: number;
    }
  /** A progress mark after a tool call: the tree of what the agent had done by then (`paths`: an edit tool's, the only ones read). */
  | ({ e: "mark"; turn: string } & ProgressMark)
  /** The agent's conversation ended (cleared, exited) with the turn open: it ran no longer. */
  | { e: "abandon"; turn: string; t: number }
  /** The agent worked on after the latest turn's stop (another hook blocked it): open again; `tree`, its state at the stop. */
  | { e: "reopen"; turn: string; tree?: string; t: number }
  | {
      e: "end";
      turn: string;
      after: string;
      changed: RelPath[];
      /** Changed paths the agent may not have changed (an interrupted turn, an overlapping session). */
      uncertain?: RelPath[];
      /** Of those, the ones changed after the last tool call that could have changed them (a person's edit, perhaps). */
      afterLastTool?: RelPath[];
      /** A later stop of a done turn (its stop was blocked by another hook): moves its end. */
      extend?: boolean;
      /** The open turn the agent's retry began, made part of this one (see continuation.ts). */
      folds?: { turn: string; unknown?: RelPath[] };
      t: number;
    }
  | {
      e: "rewind";
      id: string;
      to: string;
      turns: string[];
      safety: string;
      /** What the rewind wrote: path, mode, blob (so redo can tell whether someone changed it since). */
      written: [RelPath, string, string][];
      deleted: RelPath[];
      /** Set when the rewind was limited to these paths: its turns stay `done`. */
      paths?: RelPath[];
      /** An open turn the rewind closed: its after is the safety snapshot; uncertain as after an interrupt. */
      closed?: { turn: string; changed: RelPath[]; uncertain?: RelPath[] };
      /** On the plan, written before the first file changes (the same id without it follows the
       *  last): alone, a rewind killed half-way; run again, it finishes; redo undoes what it did. */
      pending?: true;
      t: number;
    }
  | {
      e: "redo";
      rewind: string;
      safety: string;
      /** What the redo deleted: files the rewind had brought back. (Absent in older journals.) */
      deleted?: RelPath[];
      t: number;
    };

export type TurnStatus = "open" | "done" | "rewound";

/** A turn as the journal's fold knows it. */
export interface TurnState {
  turn: string;
  prompt: string;
  before: string;
  after: string | null;
  changed: RelPath[];
  /** Files touched during the turn (attributed to it alone). */
  touched: Set<RelPath>;
  /** When each was first and last reported (microseconds), and whether first only after its edit: see `touchedBesideSince`. */
  touchTimes: Map<RelPath, { first: number; last: number; afterEdit?: boolean }>;
  /** Touched paths the before-state proves absent although the before snapshot did not look at them. */
  beforeAbsent: Set<RelPath>;
  /** Touched paths whose before-state was never captured (reported after the edit). */
  beforeUnknown: Set<RelPath>;
  /** The tree of the latest progress mark, if any. */
  progress?: string;
  /** Every progress mark of the turn, oldest first. */
  marks: ProgressMark[];
  /** Changed paths whose attribution to this turn is uncertain: rewinding them needs --force. */
  uncertain: Set<RelPath>;
  /** Of those, the ones changed after the last tool call that could have changed them. */
  afterLastTool?: Set<RelPath>;
  state: TurnStatus;
  /** Rewinds limited to some paths that put back paths this turn changed: rewind id -> those paths. */
  rewoundPaths: Map<string, RelPath[]>;
  startedAt: number;
  endedAt?: number;
  /** When its conversation ended while it was open (no snapshot then): see `abandonTurn`. */
  abandonedAt?: number;
  /** When a prompt came while it was open whose turn never began: it ends at its last mark (see `promptArrived`). */
  supersededAt?: number;
  /** How many prompts just before it never began their turns (their hooks stopped): work no turn holds. */
  unbegunBefore?: number;
}

/** A rewind that redo can still undo: its journal record, less what only the fold needs. */
export type RewindState = Omit<Extract<JournalRecord, { e: "rewind" }>, "e" | "closed">;

export interface SessionState {
  session: string;
  createdAt: number;
  updatedAt: number;
  /** In the order they began; a rewound turn whose id is begun again is replaced. */
  turns: TurnState[];
  /** Every path the session ever touched: captured by each of its snapshots, even if ignored. */
  touched: Set<RelPath>;
  /** Rewinds redo can undo, oldest first; a new turn empties it. */
  redoStack: RewindState[];
  /** A prompt whose turn never began, as a turn for other sessions' attribution (see `promptArrived`). */
  unbegun?: TurnState;
  /** How many prompts since the latest turn began never began theirs. */
  unbegunPrompts?: number;
  /** What the latest turn's beginning emptied it of: a redo from inside that turn may use it. */
  heldRedo?: { turn: string; stack: RewindState[] };
  /** Every rewind of the session that no redo undid, by id; every redo, with the rewind it undid (see `settleInnerUndos`). */
  rewinds: Map<string, RewindState>;
  redos: { t: number; rewind: RewindState }[];
  /** Every rewind and redo: when, and the paths it changed (another session's turn meanwhile must not take them for its work). */
  undos: { t: number; paths: RelPath[] }[];
}

export function emptySession(session: string): SessionState {
  return {
    session,
    createdAt: 0,
    updatedAt: 0,
    turns: [],
    touched: new Set(),
    redoStack: [],
    rewinds: new Map(),
    redos: [],
    undos: [],
  };
}

function findTurn(state: SessionState, turn: string): TurnState | undefined {
  for (let i = state.turns.length - 1; i >= 0; i--) if (state.turns[i].turn === turn) return state.turns[i];
}

/** Applies one record. Pure apart from mutating `state`; unknown or inapplicable records are ignored. */
export function applyRecord(state: SessionState, record: JournalRecord): void {
  if (typeof record.t === "number") {
    if (state.createdAt === 0) state.createdAt = record.t;
    state.updatedAt = Math.max(state.updatedAt, record.t);
  }
  switch (record.e) {
    case "begin": {
      state.turns = state.turns.filter((t) => !(t.turn === record.turn && t.state === "rewound"));
      // A new turn after a rewind makes the rewound future unreachable; a rewind killed half-way
      // stays, to be finished or undone (the next prompt's hook must not strand its files).
      innerUndos.holdRedos(state, record.turn);
      const begun = newTurn(record.turn, record.prompt, record.before, record.t);
      // Its own prompt record is one: the others came before it, and never began theirs.
      if ((state.unbegunPrompts ?? 0) > 1) begun.unbegunBefore = (state.unbegunPrompts ?? 0) - 1;
      state.turns.push(begun);
      state.unbegun = undefined;
      state.unbegunPrompts = 0;
      break;
    }
    case "touch": {
      for (const p of record.paths) state.touched.add(p);
      // Between turns, while a prompt whose turn never began runs: that prompt's (see `promptArrived`).
      const turn = record.turn === null ? state.unbegun : findTurn(state, record.turn);
      if (turn?.state !== "open") break;
      for (const p of record.files) {
        turn.touched.add(p);
        const { first = record.t, afterEdit = record.edited } = turn.touchTimes.get(p) ?? {};
        turn.touchTimes.set(p, { first, last: record.t, afterEdit });
      }
      for (const p of record.absent ?? []) turn.beforeAbsent.add(p);
      for (const p of record.unknown ?? []) turn.beforeUnknown.add(p);
      if (record.before) turn.before = record.before;
      break;
    }
    case "mark": {
      const turn = state.unbegun?.turn === record.turn ? state.unbegun : findTurn(state, record.turn);
      if (turn?.state !== "open") break;
      turn.progress = record.tree;
      turn.marks.push(markOf(record));
      break;
    }
    case "reopen":
      reopenTurn(state, record);
      break;
    case "prompt":
      promptArrived(state, record);
      break;
    case "abandon":
      ranNoLonger(
        state.unbegun?.turn === record.turn ? state.unbegun : findTurn(state, record.turn),
        record.t,
      );
      break;
    case "end": {
      const turn = findTurn(state, record.turn);
      if (turn && record.folds) foldContinuation(state, turn, record.folds);
      const extends_ = record.extend === true && turn?.state === "done" && state.turns.at(-1) === turn;
      if (!turn || (turn.state !== "open" && !extends_)) break;
      turn.after = record.after;
      turn.changed = record.changed;
      turn.uncertain = new Set(record.uncertain ?? []);
      turn.afterLastTool = new Set(record.afterLastTool ?? []);
      turn.endedAt = record.t;
      turn.state = "done";
      break;
    }
    case "rewind": {
      if (record.closed) {
        const open = findTurn(state, record.closed.turn);
        if (open && open.state === "open") {
          open.after = record.safety;
          open.changed = record.closed.changed;
          open.uncertain = new Set(record.closed.uncertain ?? []);
          open.endedAt = record.t;
        }
      }
      for (const id of record.turns) {
        const turn = findTurn(state, id);
        if (!turn) continue;
        if (record.paths === undefined) {
          turn.state = "rewound";
          continue;
        }
        if (turn.state === "open") turn.state = "done"; // closed by this (forced) rewind
        // What this rewind put back of the turn's changes (a path it had to skip was not rewound).
        const rewound = innerUndos.changesPutBack(turn, record);
        if (rewound.length > 0) turn.rewoundPaths.set(record.id, rewound);
      }
      const { e: _kind, closed: _closed, ...rewind } = record;
      innerUndos.settleInnerUndos(state, rewind, false, (id) => findTurn(state, id));
      state.rewinds.set(rewind.id, rewind);
      const planned = state.redoStack.findIndex((r) => r.id === record.id);
      if (planned === -1) state.redoStack.push(rewind);
      else state.redoStack[planned] = rewind; // the end of a rewind whose plan was recorded
      state.undos.push({ t: record.t, paths: innerUndos.pathsChangedBy(record) });
      break;
    }
    case "redo": {
      innerUndos.releaseHeldRedos(state, record.rewind);
      const index = state.redoStack.findIndex((r) => r.id === record.rewind);
      if (index === -1) break;
      const [undone] = state.redoStack.splice(index);
      state.rewinds.delete(undone.id);
      state.redos.push({ t: record.t, rewind: undone });
      state.undos.push({ t: record.t, paths: innerUndos.pathsChangedBy(undone) }); // put back what it changed
      for (const id of undone.turns) {
        const turn = findTurn(state, id);
        turn?.rewoundPaths.delete(undone.id);
        if (turn && turn.state === "rewound") turn.state = "done";
      }
      innerUndos.settleInnerUndos(state, undone, true, (id) => findTurn(state, id));
      break;
    }
  }
}

/** Folds records into a session's state. */
export function foldJournal(session: string, records: JournalRecord[]): SessionState {
  const state = emptySession(session);
  for (const record of records) applyRecord(state, record);
  return state;
}

/** The turn begun and not ended, if any (at most one: beginning a turn ends the open one). */
export function openTurnOf(state: SessionState): TurnState | undefined {
  return state.turns.find((t) => t.state === "open");
}
