import { humanText } from "../util/format.js";
import path from "node:path";
import { openWorkspace, type Workspace } from "../workspace.js";
import { GhostcommitError } from "../errors.js";
import { keptElsewhere } from "../git/repository.js";
import { idStartingWith } from "../session/context.js";
import { AGENTS } from "./event.js";
import {
  hookSessionDirs,
  hookSessionsAbove,
  hookSessionsBelow,
  hookSessionsBetween,
  latestWorkspaceHolding,
  sessionRecords,
  sessionWorkspace,
} from "./session-dirs.js";
import type { SessionHandle, TurnRecord } from "../types.js";

/**
 * `--session S`, else the most recently active session of the workspace. An empty S is a usage
 * error (an unset variable's, which must not read as another session's history), but where
 * `emptyMeansLatest`: what a Claude Code command file's `--session=${CLAUDE_SESSION_ID}` (with
 * `--agent`) becomes where Claude Code does not fill it in.
 */
export async function resolveSession(
  ws: Workspace,
  given: string | undefined,
  naming = "--session",
  emptyMeansLatest = false,
): Promise<SessionHandle> {
  if (given === "" && !emptyMeansLatest) throw emptySession(naming);
  if (given !== undefined && given !== "") return ws.session(given);
  const latest = await ws.latestSession();
  if (!latest) {
    const elsewhere = await sessionsElsewhere(ws);
    // Naming a session helps only where there is one (with no turn yet, as a touch starts one).
    const none = (await ws.sessions()).length === 0;
    const hint = none
      ? ": an agent's hooks (`ghostcommit install <agent>`) or `ghostcommit turn begin` start one"
      : ` (use ${naming})`;
    throw new GhostcommitError(
      "no-session",
      `this workspace has no session with a turn yet${elsewhere || hint}`,
    );
  }
  return latest;
}

/** An empty session id given (an unset variable, as `--session "$S"`): refused, not read as "the latest". */
export function emptySession(naming: string): GhostcommitError {
  return new GhostcommitError(
    "usage",
    `${naming} needs a session id, not an empty string (an unset variable?); leave it out for the most recently active session`,
  );
}

/** Shown where a workspace has no session: where the ones a person may mean are, or "". */
export async function sessionsElsewhere(ws: Workspace): Promise<string> {
  const above = keptElsewhere(ws.root, ws.repositoryRoot, "sessions");
  if (!above) return (await sessionsBelow(ws)) || (await sessionsEnclosing(ws.root));
  // Below an agent's subdirectory workspace (src/lib under src), its sessions are there, not at
  // the root; in a repository inside a plain directory an agent started at the top, they are there.
  const between = await hookSessionsBetween(ws.repositoryRoot!, ws.root);
  const found = between.length > 0 ? between : await hookSessionsAbove(ws.repositoryRoot!);
  return found.length === 0 ? above : `${above.slice(0, -1)}; ${listed(found)})`;
}

/** The sessions agents started in a directory that holds this workspace keep there, or "". */
async function sessionsEnclosing(root: string): Promise<string> {
  const enclosing = await hookSessionsAbove(root);
  if (enclosing.length === 0) return "";
  return ` (an agent started in a directory around this one keeps its sessions there: ${listed(enclosing)})`;
}

/** The sessions agents started in subdirectories keep there (their own workspaces), or "". */
export async function sessionsBelow(ws: Workspace): Promise<string> {
  const below = await hookSessionsBelow(ws.root);
  if (below.length === 0) return "";
  return ` (an agent started in a subdirectory keeps its sessions there: ${listed(below)})`;
}

function listed(found: { dir: string; sessions: string[] }[]): string {
  const shown = found
    .slice(0, 3)
    .map(
      ({ dir, sessions }) =>
        `-C ${dir} has ${sessions.length === 1 ? "session" : "sessions"} ${sessions.slice(0, 3).join(", ")}${sessions.length > 3 ? ", …" : ""}`,
    );
  if (found.length > 3) shown.push("…");
  return shown.join("; ");
}

/**
 * `resolveSession` for a command that works on the session's turns (log, rewind, redo), with
 * them: a session named with `--session` that has no turn here but turns in another workspace
 * (an agent's hooks keep it where the agent started; a subdirectory is a workspace of its own, so
 * a session begun at the repository's root is not found below it) is pointed to instead of
 * looking empty.
 */
export async function resolveSessionWithTurns(
  ws: Workspace,
  given: string | undefined,
  agent?: string,
  /** How the surface names a session (`--session`; an MCP tool's `session` argument). */
  naming?: string,
  /** Passed to `log` (`gone`: mark the turns whose snapshots are gone). */
  logOptions?: { gone?: boolean },
): Promise<{ session: SessionHandle; turns: TurnRecord[]; ws: Workspace }> {
  if (agent !== undefined) ws = await agentsWorkspace(ws, given, agent);
  // With `--agent`, an empty id is a Claude Code command file's unfilled token (see resolveSession).
  const session = await resolveSession(ws, given, naming, agent !== undefined);
  const turns = await session.log(logOptions);
  if (given === undefined || given === "" || turns.length > 0) return { session, turns, ws };
  const whole = await wholeSessionId(ws, given);
  // With `--agent`, the whole id finds the workspace its hooks keep it in (a start of it did not).
  if (whole !== given) return resolveSessionWithTurns(ws, whole, agent, naming, logOptions);
  const hooks = await hookSessionDirs(given, ws.root);
  const [elsewhere] = hooks.length > 0 ? hooks : await workspacesAboveWith(ws, given);
  if (elsewhere === undefined) {
    // A mistyped id would read as a session with no turns yet: one this workspace never heard of is named.
    if ((await ws.sessions()).some((known) => known.session === given)) return { session, turns, ws };
    throw new GhostcommitError(
      "not-found",
      `no session ${humanText(given)} in ${ws.root} (\`ghostcommit sessions\` lists them)`,
      { session: given },
    );
  }
  const keeper = hooks.length > 0 ? "its agent's hooks keep it" : "it is kept";
  throw new GhostcommitError(
    "not-found",
    `session ${humanText(given)} has no turns in ${ws.root}: ${keeper} in ${elsewhere} (reach it with -C ${elsewhere})`,
    { session: given },
  );
}

/**
 * The whole id of the session `given` is the start of (see `idStartingWith`: agents' session ids
 * are long UUIDs), among this workspace's sessions and those agents' hooks keep anywhere; `given`
 * itself when it is one, or the start of none.
 */
async function wholeSessionId(ws: Workspace, given: string): Promise<string> {
  const here = (await ws.sessions()).map((s) => s.session);
  const ids = new Set([...here, ...(await sessionRecords()).map((r) => r.session)]);
  if (ids.has(given)) return given;
  return idStartingWith(given, [...ids], `session ${humanText(given)}`) ?? given;
}

/**
 * `--agent A`: the workspace agent A's hooks keep the session in, wherever the command runs (a
 * slash command's line runs where the agent last `cd`-ed); with no session named, that of A's
 * latest session begun here or above. `ws` when they keep none.
 */
async function agentsWorkspace(
  ws: Workspace,
  session: string | undefined,
  agent: string,
): Promise<Workspace> {
  const known = AGENTS.find((a) => a === agent);
  if (!known)
    throw new GhostcommitError("usage", `unknown agent "${agent}" (use one of ${AGENTS.join(", ")})`);
  const dir = session ? await sessionWorkspace(known, session) : await latestWorkspaceHolding(known, ws.root);
  return dir === undefined || dir === ws.root ? ws : openBeside(ws, dir);
}

/** The workspace at `dir`, opened as `ws` was: its store, and its names for options in errors. */
async function openBeside(ws: Workspace, dir: string): Promise<Workspace> {
  const other = await openWorkspace({ cwd: dir, store: ws.store });
  other.engine.optionNames = ws.engine.optionNames;
  return other;
}

/** The nearest directory above `ws`, up to the repository's root, whose workspace has turns of `session`. */
async function workspacesAboveWith(ws: Workspace, session: string): Promise<string[]> {
  const top = ws.repositoryRoot;
  if (!top || top === ws.root) return [];
  for (let dir = path.dirname(ws.root); dir.startsWith(top); dir = path.dirname(dir)) {
    const other = await openBeside(ws, dir).catch(() => null);
    if (
      other &&
      (
        await other
          .session(session)
          .log()
          .catch(() => [])
      ).length > 0
    )
      return [dir];
    if (dir === top || path.dirname(dir) === dir) break;
  }
  return [];
}
