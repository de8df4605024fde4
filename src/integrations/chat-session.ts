import type { Workspace } from "../workspace.js";
import { sessionRecords } from "./session-dirs.js";

/**
 * The session of the conversation an MCP server serves, when a tool call names none. Two
 * conversations in one workspace each have their own agent process, which runs both their hooks
 * (through a shell) and their MCP server: the session whose last prompt's hook ran under the
 * nearest of the server's ancestors is this conversation's, the newest of them when several are
 * (`/clear` begins a new session in the same process). Undefined without such a match (hooks
 * installed with `-C`, or none ran yet): the caller takes the most recently active session.
 */
export async function conversationSession(
  ws: Workspace,
  serverAncestors: string[],
): Promise<string | undefined> {
  const records = (await sessionRecords()).filter((r) => r.dir === ws.root && r.procs.length > 0);
  const known = new Set((await ws.sessions()).map((s) => s.session));
  for (const proc of serverAncestors) {
    // Records are most recently active first.
    const match = records.find((r) => r.procs.includes(proc) && known.has(r.session));
    if (match) return match.session;
  }
  return undefined;
}
