import type { Workspace } from "../../workspace.js";
import { GhostcommitError } from "../../errors.js";
import { keptElsewhere } from "../../git/repository.js";
import { hookSessionDirs, hookSessionsBelow } from "../../integrations/session-dirs.js";
import type { SessionHandle, TurnRecord } from "../../types.js";

/**
 * `--session S`, else the most recently active session of the workspace. An empty S means the
 * latter too: what a Claude Code command file's `--session=${CLAUDE_SESSION_ID}` becomes where
 * Claude Code does not fill it in.
 */
export async function resolveSession(ws: Workspace, given: string | undefined): Promise<SessionHandle> {
  if (given !== undefined && given !== "") return ws.session(given);
  const latest = await ws.latestSession();
  if (!latest) {
    const elsewhere = await sessionsElsewhere(ws);
    throw new GhostcommitError(
      "no-session",
      `this workspace has no session yet${elsewhere || " (use --session)"}`,
    );
  }
  return latest;
}

/** Shown where a workspace has no session: where the ones a person may mean are, or "". */
export async function sessionsElsewhere(ws: Workspace): Promise<string> {
  const above = keptElsewhere(ws.root, ws.repositoryRoot, "sessions");
  if (above) return above;
  return sessionsBelow(ws);
}

/** The sessions agents started in subdirectories keep there (their own workspaces), or "". */
export async function sessionsBelow(ws: Workspace): Promise<string> {
  const below = await hookSessionsBelow(ws.root);
  if (below.length === 0) return "";
  const shown = below
    .slice(0, 3)
    .map(
      ({ dir, sessions }) =>
        `-C ${dir} has ${sessions.length === 1 ? "session" : "sessions"} ${sessions.slice(0, 3).join(", ")}${sessions.length > 3 ? ", …" : ""}`,
    );
  if (below.length > 3) shown.push("…");
  return ` (an agent started in a subdirectory keeps its sessions there: ${shown.join("; ")})`;
}

/**
 * `resolveSession` for a command that works on the session's turns (log, rewind, redo), with
 * them: a session named with `--session` that has no turn here, but that an agent's hooks keep in
 * another workspace (the agent was started in a subdirectory), is pointed to instead of looking
 * empty.
 */
export async function resolveSessionWithTurns(
  ws: Workspace,
  given: string | undefined,
): Promise<{ session: SessionHandle; turns: TurnRecord[] }> {
  const session = await resolveSession(ws, given);
  const turns = await session.log();
  if (given === undefined || given === "" || turns.length > 0) return { session, turns };
  const [elsewhere] = await hookSessionDirs(given, ws.root);
  if (elsewhere === undefined) return { session, turns };
  throw new GhostcommitError(
    "not-found",
    `session ${given} has no turns in ${ws.root}: its agent's hooks keep it in ${elsewhere} (reach it with -C ${elsewhere})`,
    { session: given },
  );
}
