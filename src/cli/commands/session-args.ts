import type { Workspace } from "../../workspace.js";
import { GhostcommitError } from "../../errors.js";
import { keptElsewhere } from "../../git/repository.js";
import type { SessionHandle } from "../../types.js";

/** `--session S`, else the most recently active session of the workspace. */
export async function resolveSession(ws: Workspace, given: string | undefined): Promise<SessionHandle> {
  if (given !== undefined) return ws.session(given);
  const latest = await ws.latestSession();
  if (!latest) {
    const elsewhere = keptElsewhere(ws.root, ws.repositoryRoot, "sessions");
    throw new GhostcommitError(
      "no-session",
      `this workspace has no session yet${elsewhere || " (use --session)"}`,
    );
  }
  return latest;
}
