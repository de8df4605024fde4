import path from "node:path";
import { checkArgument, checkedOptions, isStringList } from "../errors.js";
import type { StoreContext } from "../store/context.js";
import { displayPath } from "../paths.js";
import { goneSnapshots } from "../store/live-snapshots.js";
import { isoFromMicros } from "../store/metadata.js";
import type {
  RedoOptions,
  RedoReport,
  RewindOptions,
  RewindReport,
  SessionHandle,
  SessionSummary,
  TouchResult,
  TurnBegun,
  TurnEnded,
  TurnRecord,
} from "../types.js";
import { type SessionContext, sessionContext } from "./context.js";
import { latestJournal, readAllJournals } from "./journal.js";
import { openTurnOf, type SessionState, type TurnState } from "./model.js";
import { redoSession } from "./redo.js";
import { readOrigins } from "./remote-sessions.js";
import { rewindSession } from "./rewind.js";
import { touchPaths, touchTargets } from "./touch.js";
import { markProgress } from "./progress.js";
import { beginTurn, endTurn, extendTurn } from "./turns.js";
import { abandonTurn } from "./abandon.js";

/** One agent conversation in a workspace: the library face of the session layer. */
export class Session implements SessionHandle {
  private readonly ctx: SessionContext;

  constructor(
    engine: StoreContext,
    cwd: string,
    readonly id: string,
    /** Runs after a turn ends, outside the store's write lock (the workspace's daily retention). */
    private readonly afterTurnEnd: () => Promise<unknown> = async () => {},
    /** Runs before a turn ends (what `afterTurnEnd` will start can get ready meanwhile). */
    private readonly beforeTurnEnd: () => void = () => {},
  ) {
    this.ctx = sessionContext(engine, cwd, id);
  }

  async beginTurn(turn: string, options?: { prompt?: string }): Promise<TurnBegun> {
    const { prompt = "" } = checkedOptions(options, "beginTurn", { strings: ["prompt"] });
    return this.ctx.engine.capturing(() => beginTurn(this.ctx, turn, prompt));
  }

  /** Ends `turn` (default: the open turn). */
  async endTurn(turn?: string, options?: { everyToolMarked?: boolean }): Promise<TurnEnded> {
    const checked = checkedOptions(options, "endTurn", { booleans: ["everyToolMarked"] });
    this.beforeTurnEnd();
    const ended = await this.ctx.engine.capturing(() => endTurn(this.ctx, turn, checked));
    await this.afterTurnEnd();
    return ended;
  }

  /**
   * Marks paths as the agent's. `continuing`: the agent's own tool call, which after the latest
   * turn's stop (another hook blocked it) and before a new prompt continues that turn.
   */
  async touched(
    paths: string[],
    options?: { edited?: boolean; continuing?: boolean; mark?: "before" | "after"; hooksBeside?: boolean },
  ): Promise<TouchResult> {
    checkArgument(isStringList(paths), "touched takes a list of paths (strings)");
    const checked = checkedOptions(options, "touched", {
      booleans: ["edited", "continuing", "hooksBeside"],
      strings: ["mark"],
    });
    const { mark } = checked;
    checkArgument(
      mark === undefined || mark === "before" || mark === "after",
      'touched: mark must be "before" or "after"',
    );
    const rels = touchTargets(this.ctx, paths); // before writing makes the store
    return this.ctx.engine.capturing(() => touchPaths(this.ctx, rels, checked));
  }

  /** Records what the open turn changed so far (all of it, or only `paths`): a progress mark. */
  async progress(
    paths?: string[],
    options?: { continuing?: boolean; unwritten?: boolean; hooksBeside?: boolean },
  ): Promise<void> {
    checkArgument(paths === undefined || isStringList(paths), "progress takes a list of paths (strings)");
    const checked = checkedOptions(options, "progress", {
      booleans: ["continuing", "unwritten", "hooksBeside"],
    });
    checkArgument(!checked.unwritten || paths !== undefined, "progress: unwritten needs paths");
    return this.ctx.engine.capturing(() => markProgress(this.ctx, paths, checked));
  }

  /** A later stop of a turn whose stop was blocked: the latest turn's end moves here. */
  async extendTurn(options: { prompt?: string; everyToolMarked?: boolean } = {}): Promise<TurnEnded | null> {
    checkedOptions(options, "extendTurn", { strings: ["prompt"], booleans: ["everyToolMarked"] });
    this.beforeTurnEnd();
    const { prompt, everyToolMarked } = options;
    const ended = await this.ctx.engine.capturing(() => extendTurn(this.ctx, prompt, { everyToolMarked }));
    await this.afterTurnEnd();
    return ended;
  }

  /** The conversation ended with a turn open (or a prompt whose turn never began): marks it as over, without a snapshot. */
  async abandonTurn(): Promise<string | null> {
    // Read first: a session with no open turn is left as it is (and no store is made for it).
    const state = await this.state();
    if (!openTurnOf(state) && !state.unbegun) return null;
    return this.ctx.engine.capturing(() => abandonTurn(this.ctx));
  }

  async rewind(options: RewindOptions): Promise<RewindReport> {
    const booleans = ["force", "dryRun", "keepOpenTurn"];
    checkArgument(options?.to !== undefined, "rewind needs { to }: the turn to rewind to (its id)");
    const checked = checkedOptions(options, "rewind", {
      booleans,
      strings: ["to"],
      others: ["paths", "expect", "signal"],
    });
    return this.markInnerUndo(
      checked,
      await this.ctx.engine.capturing(() => rewindSession(this.ctx, checked)),
    );
  }

  /**
   * An undo from inside the open turn (the agent was asked to) is that turn's work, as a tool
   * call's is: marked so, an interrupt after it does not leave its files in doubt.
   */
  private async markInnerUndo<R extends { written: string[]; deleted: string[] }>(
    options: { keepOpenTurn?: boolean; dryRun?: boolean },
    report: R,
  ): Promise<R> {
    const changed = [...report.written, ...report.deleted];
    if (!options.keepOpenTurn || options.dryRun || changed.length === 0) return report;
    const paths = changed.map((p) => path.join(this.ctx.engine.root, p));
    await this.ctx.engine.capturing(() => markProgress(this.ctx, paths));
    return report;
  }

  async redo(options?: RedoOptions): Promise<RedoReport> {
    const checked = checkedOptions(options, "redo", {
      booleans: ["force", "dryRun", "keepOpenTurn"],
      others: ["expect", "signal"],
    });
    return this.markInnerUndo(checked, await this.ctx.engine.capturing(() => redoSession(this.ctx, checked)));
  }

  /** The session as its journal says, for a call that only reads. */
  private state(): Promise<SessionState> {
    this.ctx.engine.assertPresent();
    return this.ctx.journal.load();
  }

  async nextRedo(): Promise<string[] | null> {
    return (await this.state()).redoStack.at(-1)?.turns ?? null;
  }

  async nextRedoPaths(): Promise<string[] | null> {
    const state = await this.state();
    const last = state.redoStack.at(-1);
    if (last?.paths === undefined) return null;
    // What it put back of its turns' changes, as log's "rewound only" lists them.
    const putBack = new Set(state.turns.flatMap((t) => t.rewoundPaths.get(last.id) ?? []));
    return [...putBack].sort().map(displayPath);
  }

  async log(options?: { gone?: boolean }): Promise<TurnRecord[]> {
    const { gone } = checkedOptions(options, "log", { booleans: ["gone"] });
    const state = await this.state();
    const unfinished = new Set(state.redoStack.filter((r) => r.pending).flatMap((r) => r.turns));
    const turns = state.turns.map((turn) => {
      const record = toTurnRecord(turn);
      if (turn.state === "rewound" && unfinished.has(turn.turn)) record.rewindUnfinished = true;
      return record;
    });
    if (!gone) return turns;
    // One listing of the store's refs for the whole session, not a lookup per turn.
    // A store whose refs cannot be listed (damaged: doctor says how) leaves the turns unmarked:
    // the log still reads, and a rewind says what is wrong.
    const lost = await goneSnapshots(
      this.ctx.engine.refs,
      turns.flatMap((t) => (t.after ? [t.before, t.after] : [t.before])),
    ).catch(() => new Set<string>());
    for (const t of turns) if (lost.has(t.before) || (t.after !== null && lost.has(t.after))) t.gone = true;
    return turns;
  }

  async openTurn(): Promise<string | null> {
    return openTurnOf(await this.state())?.turn ?? null;
  }

  /** How many turns, and when the session was last active; null before its first record. */
  async summary(): Promise<SessionSummary | null> {
    const state = await this.state();
    return state.updatedAt === 0 ? null : toSummary(state);
  }
}

export function toTurnRecord(turn: TurnState): TurnRecord {
  const record: TurnRecord = {
    turn: turn.turn,
    prompt: turn.prompt,
    before: turn.before,
    after: turn.after,
    changed: turn.changed.map(displayPath),
    state: turn.state,
    startedAt: isoFromMicros(turn.startedAt),
  };
  if (turn.endedAt !== undefined) record.endedAt = isoFromMicros(turn.endedAt);
  if (turn.abandonedAt !== undefined && turn.state === "open")
    record.abandonedAt = isoFromMicros(turn.abandonedAt);
  if (turn.uncertain.size > 0) record.uncertain = [...turn.uncertain].map(displayPath);
  if (turn.unbegunBefore) record.unbegunBefore = turn.unbegunBefore;
  // Only while the turn stands: rewound whole since, all of it is put back (a redo brings the
  // partial state back, and these paths with it).
  const rewound = new Set([...turn.rewoundPaths.values()].flat());
  if (rewound.size > 0 && turn.state !== "rewound")
    record.rewoundPaths = [...rewound].sort().map(displayPath);
  return record;
}

export function toSummary(state: SessionState): SessionSummary {
  return { session: state.session, turns: state.turns.length, updatedAt: isoFromMicros(state.updatedAt) };
}

/** The workspace's sessions, most recently active first. */
export async function listSessions(engine: StoreContext): Promise<SessionSummary[]> {
  const [journals, origins] = await Promise.all([
    readAllJournals(engine.paths.sessionsDir),
    readOrigins(engine),
  ]);
  return journals.map((state) => {
    const summary = toSummary(state);
    const origin = origins.get(state.session); // a session brought in by fetch
    if (origin) summary.origin = origin;
    return summary;
  });
}

/** The most recently active session's id, or null when there is none. */
export async function latestSessionId(engine: StoreContext): Promise<string | null> {
  return (await latestJournal(engine.paths.sessionsDir))?.session ?? null;
}
