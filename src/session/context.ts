import type { StoreContext } from "../store/context.js";
import { GhostcommitError } from "../errors.js";
import { keptElsewhere } from "../git/repository.js";
import { quotedPath, humanText } from "../util/format.js";
import { Journal } from "./journal.js";
import type { SessionState, TurnState } from "./model.js";

/** What every session operation needs: the engine, the session's journal, and the base for relative paths. */
export interface SessionContext {
  engine: StoreContext;
  journal: Journal;
  /** Relative paths given to `touch` resolve against this directory (`-C`, else cwd). */
  cwd: string;
}

export function sessionContext(engine: StoreContext, cwd: string, session: string): SessionContext {
  checkId(session, "session");
  return { engine, journal: new Journal(engine.paths.sessionsDir, session), cwd };
}

export function checkTurnId(turn: unknown): string {
  return checkId(turn, "turn");
}

/**
 * A session or turn id must be non-empty text without a NUL byte: git cuts a snapshot's message
 * at one, which loses its record, so the turn's snapshots were left out of every listing.
 */
function checkId(id: unknown, what: "session" | "turn"): string {
  if (typeof id !== "string" || id.trim() === "") {
    throw new GhostcommitError("usage", `a ${what} id must be a non-empty string`);
  }
  if (id.includes("\0")) {
    throw new GhostcommitError("usage", `a ${what} id cannot hold a NUL byte: ${JSON.stringify(id)}`);
  }
  return id;
}

/**
 * The id of the turn a person named: its own id, else the one turn whose id starts with it (see
 * `idStartingWith`: an agent's turn ids can be long, as Codex's are). Any other id is returned as
 * given, for `requireTurn` to refuse.
 */
export function turnIdOf(state: SessionState, given: string): string {
  if (state.turns.some((t) => t.turn === given)) return given;
  const ids = [...new Set(state.turns.map((t) => t.turn))];
  return (
    idStartingWith(given, ids, `turn ${humanText(given)} of session ${humanText(state.session)}`) ?? given
  );
}

/**
 * The one of `ids` that starts with `given`, which must be at least 4 characters long (as git's
 * shortest abbreviation), or undefined; a start several share is refused, `what` naming it.
 */
export function idStartingWith(given: string, ids: string[], what: string): string | undefined {
  if (given.length < 4) return undefined;
  const matching = ids.filter((id) => id.startsWith(given));
  if (matching.length > 1) {
    const named = matching.slice(0, 5).map(humanText).join(", ") + (matching.length > 5 ? ", …" : "");
    throw new GhostcommitError("ambiguous-id", `${what} could be any of ${named}: give more of its id`, {
      id: given,
      candidates: matching,
    });
  }
  return matching[0];
}

/**
 * The latest turn with this id, or a not-found error; one of a session with no turns here (`engine`'s
 * workspace) says so, and where a subdirectory's caller finds the repository's sessions.
 */
export function requireTurn(state: SessionState, turn: string, engine?: StoreContext): TurnState {
  for (let i = state.turns.length - 1; i >= 0; i--) if (state.turns[i].turn === turn) return state.turns[i];
  const { root, worktreeRoot } = engine?.location ?? {};
  const none = engine && root && state.turns.length === 0;
  const message = none
    ? `session ${humanText(state.session)} has no turns in ${root}${keptElsewhere(root, worktreeRoot, "sessions", engine.optionNames.workspace)}`
    : `session ${humanText(state.session)} has no turn ${humanText(turn)}`;
  throw new GhostcommitError("not-found", message, { session: state.session, turn });
}

/**
 * Results of a `beginTurn` that found its turn already open: a retried hook, or the same hook
 * installed twice and run at once. Only the call that began the turn tells the model what went back.
 */
const repeatedBegins = new WeakSet<object>();

export function repeatedBegin<T extends object>(begun: T): T {
  repeatedBegins.add(begun);
  return begun;
}

export function isRepeatedBegin(begun: object): boolean {
  return repeatedBegins.has(begun);
}

/** Microseconds to the ISO form used in every report. */
export { isoFromMicros as isoTime } from "../store/metadata.js";

/** Why some of a refusal's conflicts are: see `conflictError`. */
export interface ConflictReasons {
  /** Paths the session may not have changed at all. */
  uncertain?: readonly string[];
  /** Of those, the ones changed after the last tool call that could have changed them. */
  afterLastTool?: readonly string[];
  /** The session's open turn the rewind leaves open (an undo from inside it), whose own edits conflict too. */
  keptOpen?: string;
  /** Not captured at the end of the turn that changed them, as the repository ignored them then. */
  ignoredAtEnd?: readonly string[];
  /** Changed by someone else between two of the turns being rewound. */
  betweenTurns?: readonly string[];
}

/** The refusal of a rewind or redo: someone changed these paths since the session last did; nothing was changed. */
export function conflictError(
  action: "rewind" | "redo",
  session: string,
  conflicts: string[],
  {
    uncertain = [],
    afterLastTool = [],
    keptOpen,
    ignoredAtEnd = [],
    betweenTurns = [],
  }: ConflictReasons = {},
): GhostcommitError {
  const doubtful = new Set(uncertain);
  const unseen = new Set(ignoredAtEnd);
  const late = new Set(afterLastTool);
  const between = conflicts.filter((p) => betweenTurns.includes(p) && !doubtful.has(p));
  const edited = conflicts.filter((p) => !doubtful.has(p) && !unseen.has(p) && !between.includes(p));
  const maybe = conflicts.filter((p) => doubtful.has(p));
  const reasons: string[] = [];
  const one = edited.length === 1;
  if (edited.length > 0 && keptOpen !== undefined) {
    reasons.push(
      `${edited.length} ${one ? "file was" : "files were"} changed after the turns being rewound, by the open turn ${humanText(keptOpen)} itself, another session or a person (${listed(edited)})`,
    );
  } else if (edited.length > 0) {
    // A redo's files were last changed by the rewind it undoes, not by the session's turns.
    const since =
      action === "redo" ? "the rewind" : `session ${humanText(session)} last changed ${one ? "it" : "them"}`;
    reasons.push(
      `${edited.length} ${one ? "file was" : "files were"} changed since ${since} (${listed(edited)})`,
    );
  }
  if (between.length > 0) {
    const one = between.length === 1;
    reasons.push(
      `${between.length} ${one ? "file was" : "files were"} changed by someone else between turns of session ${humanText(session)}, which rewinding them would undo too (${listed(between)})`,
    );
  }
  // Changed after the turn's last tool call that could have changed them, before its stop (a
  // person's edit while the agent wrote its answer, most likely), or seen changed by a refused edit.
  const lastCall = maybe.filter((p) => late.has(p));
  if (lastCall.length > 0) {
    const one = lastCall.length === 1;
    reasons.push(
      `${lastCall.length} ${one ? "file was" : "files were"} changed by none of session ${humanText(session)}'s tool calls (after the last one that could have changed ${one ? "it" : "them"}, or before the agent edited ${one ? "it" : "them"}), so ${one ? "it" : "they"} may be a person's edit or another session's (${listed(lastCall)})`,
    );
  }
  // Changed with no tool call reporting it (or edited by another session's tools too) while
  // another session's turn ran, or after an interrupt.
  const other = maybe.filter((p) => !late.has(p));
  if (other.length > 0) {
    const one = other.length === 1;
    reasons.push(
      `${other.length} ${one ? "file" : "files"} may not be session ${humanText(session)}'s work: no tool call reported ${one ? "its change" : "their changes"}, or another session's also edited ${one ? "it" : "them"}, while another session's turn ran or after an interrupt (${listed(other)})`,
    );
  }
  const notSeen = conflicts.filter((p) => unseen.has(p));
  if (notSeen.length > 0) {
    const one = notSeen.length === 1;
    reasons.push(
      `${notSeen.length} ${one ? "file was" : "files were"} not captured at the end of the turn that changed ${one ? "it" : "them"}, as the repository ignored ${one ? "it" : "them"} then (a rule the turn wrote, perhaps), so whether ${one ? "it was" : "they were"} changed since is unknown (${listed(notSeen)})`,
    );
  }
  const error = new GhostcommitError(
    "conflict",
    `${action} refused: ${reasons.join("; ")}; nothing was changed`,
    {
      session,
      conflicts,
      ...(maybe.length > 0 ? { uncertain: maybe } : {}),
      ...(lastCall.length > 0 ? { afterLastTool: lastCall } : {}),
      ...(notSeen.length > 0 ? { ignoredAtEnd: notSeen } : {}),
      ...(between.length > 0 ? { betweenTurns: between } : {}),
    },
  );
  error.forceable = true;
  return error;
}

/** Quoted where needed: the message is one line, and a name must not end it or reach the terminal raw. */
function listed(paths: string[]): string {
  return paths.slice(0, 10).map(quotedPath).join(", ") + (paths.length > 10 ? ", …" : "");
}
