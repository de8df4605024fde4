import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { openWorkspace, type Workspace } from "../workspace.js";
import type { StoreKind } from "../config.js";
import { GhostcommitError } from "../errors.js";

export interface McpOptions {
  /** The workspace (`-C`, else the server's cwd). */
  dir: string;
  store?: StoreKind;
  version: string;
}

/** A tool result carrying the CLI's `--json` document as text, and as structured content. */
function result(json: unknown, isError = false): CallToolResult {
  // structuredContent must be an object: lists are wrapped, the text stays the CLI's document.
  const structured = Array.isArray(json) ? { items: json } : (json as Record<string, unknown>);
  const out: CallToolResult = {
    content: [{ type: "text", text: JSON.stringify(json, null, 2) }],
    structuredContent: structured,
  };
  if (isError) out.isError = true;
  return out;
}

/** The CLI's `--json` error document, as a tool error (never a protocol error or a crash). */
function failure(error: unknown): CallToolResult {
  const known = error instanceof GhostcommitError;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`ghostcommit mcp: ${message}\n`);
  return result({ error: { code: known ? error.code : "internal", message } }, true);
}

/** Builds the server with its four tools; each call opens the workspace afresh (config edits apply). */
export function createMcpServer(options: McpOptions): McpServer {
  const server = new McpServer({ name: "ghostcommit", version: options.version });
  const withWorkspace =
    <A>(work: (ws: Workspace, args: A) => Promise<CallToolResult>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return await work(await openWorkspace({ cwd: options.dir, store: options.store }), args);
      } catch (error) {
        return failure(error);
      }
    };

  server.registerTool(
    "snapshot",
    {
      title: "Take a snapshot",
      description:
        "Snapshot every file of the workspace (tracked, untracked, and `include` paths even if ignored) without touching git's index. Returns {id, parent, createdAt, fileCount, excluded}.",
      inputSchema: {
        message: z.string().optional().describe("what this snapshot is for"),
        include: z
          .array(z.string())
          .optional()
          .describe("workspace-relative paths to capture even if gitignored"),
      },
    },
    withWorkspace(async (ws, args: { message?: string; include?: string[] }) =>
      result(await ws.snapshot({ message: args.message, include: args.include })),
    ),
  );

  server.registerTool(
    "list_snapshots",
    {
      title: "List snapshots",
      description:
        "This workspace's snapshots, newest first: [{id, createdAt, message, kind, session?, turn?}].",
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    withWorkspace(async (ws) => result(await ws.list())),
  );

  server.registerTool(
    "diff",
    {
      title: "Diff a snapshot",
      description:
        "Changes from snapshot `id` to the working tree, or to snapshot `id2`: [{path, status, oldMode?, newMode?}]. Ids may be unique prefixes of 7+ hex digits.",
      inputSchema: {
        id: z.string().describe("snapshot id or unique prefix"),
        id2: z.string().optional().describe("second snapshot (default: the working tree)"),
      },
      annotations: { readOnlyHint: true },
    },
    withWorkspace(async (ws, args: { id: string; id2?: string }) => result(await ws.diff(args.id, args.id2))),
  );

  server.registerTool(
    "restore",
    {
      title: "Restore a snapshot",
      description:
        "Make the workspace's files equal to snapshot `id`, after taking a safety snapshot (restore it to undo). With dryRun, only report the plan. Returns {written, deleted, skipped, safety}.",
      inputSchema: {
        id: z.string().describe("snapshot id or unique prefix"),
        dryRun: z.boolean().optional().describe("report what would change, change nothing"),
      },
      annotations: { destructiveHint: true },
    },
    withWorkspace(async (ws, args: { id: string; dryRun?: boolean }) => {
      const report = await ws.restore(args.id, { dryRun: args.dryRun });
      // Like the CLI's exit status 1: some path could not be written.
      return result(
        report,
        report.skipped.some((s) => s.reason !== "excluded"),
      );
    }),
  );
  return server;
}

/** Serves MCP on stdin/stdout until the client closes stdin. Diagnostics go to stderr only. */
export async function serveMcp(options: McpOptions): Promise<void> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on("end", () => void server.close().finally(resolve));
  });
  await server.connect(transport);
  await closed;
}
