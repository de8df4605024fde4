import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { result } from "./mcp-answer.js";
import { truncated } from "./mcp-schemas.js";
import type { WithWorkspace } from "./mcp-tools.js";

// Push and fetch for the model. A model may only name a remote the user configured (no URL, no
// path, not even `.` or a bare repository's directory name), and cannot send the content of ignored files (no `includeIgnored`): the
// refusal stands, so a prompt injected into the conversation cannot ship secrets to a host of
// its choosing.
const remote = z
  .string()
  .regex(/^[A-Za-z0-9._-]+$/, "a remote name of the repository (URLs and paths are for the command line)")
  .optional()
  .describe("a remote name of the repository (default: origin)");

const sessionCounts = z.array(
  z.looseObject({ session: z.string(), turns: z.number(), status: z.enum(["created", "updated"]) }),
);

const pushOutput = z.looseObject({
  remote: z.string(),
  url: z.string(),
  sessions: sessionCounts,
  unchanged: z.array(z.string()),
  behind: z.array(z.string()),
  snapshots: z.array(z.string()),
  refs: z.number(),
  bytes: z.number(),
  truncated,
});

const fetchOutput = z.looseObject({
  remote: z.string(),
  url: z.string(),
  sessions: sessionCounts,
  unchanged: z.array(z.string()),
  conflicts: z.array(z.looseObject({ session: z.string(), reason: z.string() })),
  snapshots: z.array(z.string()),
  bytes: z.number(),
  truncated,
});

export function registerRemoteTools(server: McpServer, withWorkspace: WithWorkspace): void {
  server.registerTool(
    "push",
    {
      title: "Push session history",
      description:
        "Send this workspace's sessions (and with `snapshots`, plain snapshots) to a git remote under refs/ghostcommit/, where ordinary clones never see them. Refuses (conflict) when a snapshot holds files the repository ignores. Use only when the user asks to keep or share the history.",
      inputSchema: z.strictObject({
        remote,
        sessions: z.array(z.string().min(1)).optional().describe("only these sessions (default: all)"),
        snapshots: z.boolean().optional().describe("plain snapshots too"),
      }),
      outputSchema: pushOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    withWorkspace(async (ws, args: { remote?: string; sessions?: string[]; snapshots?: boolean }) =>
      result(
        await ws.push({
          remote: args.remote,
          sessions: args.sessions,
          snapshots: args.snapshots,
          configuredRemoteOnly: true,
        }),
      ),
    ),
  );

  server.registerTool(
    "fetch",
    {
      title: "Fetch session history",
      description:
        "Bring sessions pushed from another machine into this workspace's store (never changes files): then `sessions`, `log` and `rewind` work on them.",
      inputSchema: z.strictObject({ remote }),
      outputSchema: fetchOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    withWorkspace(async (ws, args: { remote?: string }) =>
      result(await ws.fetch({ remote: args.remote, configuredRemoteOnly: true })),
    ),
  );
}
