import type { Workspace } from "../../workspace.js";
import { GhostcommitError } from "../../errors.js";
import { keptElsewhere } from "../../git/repository.js";
import { hookSessionsBelow } from "../../integrations/session-dirs.js";
import type { SessionHandle } from "../../types.js";

/** `--session S`, else the most recently active session of the workspace. */
export async function resolveSession(ws: Workspace, given: string | undefined): Promise<SessionHandle> {
  if (given !== undefined) return ws.session(given);
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
