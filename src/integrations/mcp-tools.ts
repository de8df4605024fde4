import type { CallToolResult, McpServer, ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Workspace } from "../workspace.js";
import type { RestoreReport } from "../types.js";
import { hardSkips } from "../restore/outcome.js";
import { GhostcommitError } from "../errors.js";
import { emptySession, resolveSessionWithTurns } from "./session-lookup.js";
import { shellWord } from "../util/shell.js";
import { result } from "./mcp-answer.js";
import * as out from "./mcp-schemas.js";

/** How a tool call names a session, for the messages that ask for one. */
const SESSION_ARGUMENT = "the `session` argument";

/**
 * Runs a tool's work on a freshly opened workspace (config edits apply); errors become tool errors.
 * `signal`: the client cancelled the call, or the server is stopping.
 */
export type WithWorkspace = <A>(
  work: (ws: Workspace, args: A, signal: AbortSignal) => Promise<CallToolResult>,
) => (args: A, ctx: ServerContext) => Promise<CallToolResult>;

const snapshotId = z.string().describe("snapshot id or a unique prefix of 7+ hex digits");
const paths = z
  .array(z.string())
  .optional()
  .describe("workspace-relative paths to act on (a directory names everything below it); default: all");
const session = z
  .string()
  .optional()
  .describe("session id (default: this conversation's, else the most recently active)");
const limit = z.number().int().positive().optional();

/** The workspace's tools act on its own files only: no tool reaches beyond the machine. */
const local = { openWorldHint: false } as const;
const reader = { ...local, readOnlyHint: true, idempotentHint: true } as const;

/** A command to run in a terminal, for the rest of a cut answer. */
const terminal = (...words: string[]) =>
  `run \`ghostcommit ${words.map(shellWord).join(" ")} --json\` in a terminal`;

/**
 * A restore-shaped report is a tool error when some path could not be written (the CLI's exit 1).
 * Cut, the rest of its lists is what changed since its safety snapshot.
 */
function reported(
  report: Pick<RestoreReport, "skipped" | "dryRun"> & { safety?: string | null },
): CallToolResult {
  const { safety } = report;
  const rest =
    safety && !report.dryRun
      ? `\`diff {"id": "${safety}"}\` lists every file changed since the safety snapshot taken just before (with \`paths\` to narrow it), or ${terminal("diff", safety)}`
      : "pass `paths` to narrow the call";
  return result(report, { isError: hardSkips(report), rest });
}

/** The session a tool call naming none acts on (undefined: the most recently active). */
export type DefaultSession = (ws: Workspace) => Promise<string | undefined>;

export function registerTools(
  server: McpServer,
  withWorkspace: WithWorkspace,
  defaultSession: DefaultSession = async () => undefined,
): void {
  const sessionOf = async (ws: Workspace, given: string | undefined) => {
    if (given === "") throw emptySession(SESSION_ARGUMENT);
    return given ?? (await defaultSession(ws));
  };
  server.registerTool(
    "snapshot",
    {
      title: "Take a snapshot",
      description:
        "Snapshot every file of the workspace (tracked, untracked, and `include` paths even if ignored) without touching git's index.",
      inputSchema: z.strictObject({
        message: z.string().optional().describe("what this snapshot is for"),
        include: z
          .array(z.string())
          .optional()
          .describe("workspace-relative paths to capture even if gitignored"),
      }),
      outputSchema: out.snapshotOutput,
      annotations: { ...local, readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    withWorkspace(async (ws, args: { message?: string; include?: string[] }) => {
      const taken = await ws.snapshot({ message: args.message, include: args.include });
      return result(taken, { rest: terminal("show", taken.id) });
    }),
  );

  server.registerTool(
    "list_snapshots",
    {
      title: "List snapshots",
      description: "This workspace's snapshots, newest first.",
      inputSchema: z.strictObject({ limit: limit.describe("at most this many (the newest)") }),
      outputSchema: out.listOutput,
      annotations: reader,
    },
    withWorkspace(async (ws, args: { limit?: number }) => {
      const all = await ws.list();
      const shown = args.limit === undefined ? all : all.slice(0, args.limit);
      return result(shown, { rest: `pass a smaller \`limit\`, or ${terminal("list")}` });
    }),
  );

  server.registerTool(
    "diff",
    {
      title: "Diff a snapshot",
      description: "Changes from snapshot `id` to the working tree, or to snapshot `id2`.",
      inputSchema: z.strictObject({
        id: snapshotId,
        id2: snapshotId.optional().describe("second snapshot (default: the working tree)"),
        paths,
      }),
      outputSchema: out.diffOutput,
      annotations: reader,
    },
    withWorkspace(async (ws, args: { id: string; id2?: string; paths?: string[] }) => {
      const entries = await ws.diff(args.id, args.id2, { paths: args.paths });
      const ids = args.id2 === undefined ? [args.id] : [args.id, args.id2];
      return result(entries, { rest: `pass \`paths\` to narrow it, or ${terminal("diff", ...ids)}` });
    }),
  );

  server.registerTool(
    "restore",
    {
      title: "Restore a snapshot",
      description:
        "Make the workspace's files equal to snapshot `id`, after taking a safety snapshot (restore it to undo). With dryRun, only report the plan.",
      inputSchema: z.strictObject({
        id: snapshotId,
        paths,
        dryRun: z.boolean().optional().describe("report what would change, change nothing"),
      }),
      outputSchema: out.restoreOutput,
      annotations: { ...local, readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    withWorkspace(async (ws, args: { id: string; paths?: string[]; dryRun?: boolean }, signal) =>
      reported(await ws.restore(args.id, { dryRun: args.dryRun, paths: args.paths, signal })),
    ),
  );

  server.registerTool(
    "sessions",
    {
      title: "List sessions",
      description: "Agent conversations recorded in this workspace, most recently active first.",
      inputSchema: z.strictObject({}),
      outputSchema: out.sessionsOutput,
      annotations: reader,
    },
    withWorkspace(async (ws) => result(await ws.sessions(), { rest: terminal("sessions") })),
  );

  server.registerTool(
    "log",
    {
      title: "List a session's turns",
      description:
        "A session's turns, oldest first: prompt preview, changed paths, state (open = in progress, done, rewound).",
      inputSchema: z.strictObject({ session, limit: limit.describe("only the last this many turns") }),
      outputSchema: out.logOutput,
      annotations: reader,
    },
    withWorkspace(async (ws, args: { session?: string; limit?: number }) => {
      const { session: handle, turns } = await resolveSessionWithTurns(
        ws,
        await sessionOf(ws, args.session),
        undefined,
        SESSION_ARGUMENT,
      );
      const shown = args.limit === undefined ? turns : turns.slice(-args.limit);
      return result(shown, {
        beside: { session: handle.id },
        newest: ["items"], // oldest first: a cut keeps the latest turns
        rest: `pass \`limit\` for fewer turns, or ${terminal("log", "--session", handle.id)}`,
      });
    }),
  );

  server.registerTool(
    "rewind",
    {
      title: "Rewind turns",
      description:
        "Put back the files that turn `to` and every later turn of the session changed, as they were before `to`. Called during your own turn, it rewinds the turns before it and leaves yours open. Refuses (conflicts) when a file was changed since; `force` overwrites. Undo with `redo`.",
      inputSchema: z.strictObject({
        to: z.string().describe("the first turn to undo (see `log`)"),
        session,
        paths,
        dryRun: z.boolean().optional().describe("report what would change, change nothing"),
        force: z.boolean().optional().describe("overwrite files changed since (ask the user first)"),
      }),
      outputSchema: out.rewindOutput,
      annotations: { ...local, readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    withWorkspace(
      async (
        ws,
        args: { to: string; session?: string; paths?: string[]; dryRun?: boolean; force?: boolean },
        signal,
      ) => {
        const { session: handle } = await resolveSessionWithTurns(
          ws,
          await sessionOf(ws, args.session),
          undefined,
          SESSION_ARGUMENT,
        );
        const { to, paths: chosen, dryRun, force } = args;
        // The caller is the agent, inside its own turn when one is open.
        const report = await handle
          .rewind({ to, paths: chosen, dryRun, force, keepOpenTurn: true, signal })
          .catch((error: unknown) => {
            // Besides `force`, as the command line says: the other paths alone, these left as they are.
            if (GhostcommitError.is(error, "conflict"))
              error.message += "; `paths` naming only the others rewinds those and leaves these as they are";
            throw error;
          });
        return reported(report);
      },
    ),
  );

  server.registerTool(
    "redo",
    {
      title: "Redo",
      description:
        "Undo the session's last rewind: its files come back as they were before it. Refuses (conflicts) when a file was changed since; `force` overwrites.",
      inputSchema: z.strictObject({
        session,
        force: z.boolean().optional().describe("overwrite files changed since (ask the user first)"),
      }),
      outputSchema: out.redoOutput,
      // It deletes files (those the turns deleted) and, forced, overwrites a person's edits.
      annotations: { ...local, readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    },
    withWorkspace(async (ws, args: { session?: string; force?: boolean }, signal) =>
      reported(
        await (
          await resolveSessionWithTurns(ws, await sessionOf(ws, args.session), undefined, SESSION_ARGUMENT)
        ).session.redo({
          force: args.force,
          keepOpenTurn: true,
          signal,
        }),
      ),
    ),
  );
}
