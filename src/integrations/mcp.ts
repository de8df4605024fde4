import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { openWorkspace } from "../workspace.js";
import type { StoreKind } from "../config.js";
import { errorDocument, GhostcommitError, reportable } from "../errors.js";
import { isTooBroad } from "../paths.js";
import { registerRemoteTools } from "./mcp-remote-tools.js";
import { result } from "./mcp-answer.js";
import { registerTools, type WithWorkspace } from "./mcp-tools.js";
import { collectAnnouncements } from "../util/announce.js";
import { processAncestors } from "../util/process-tree.js";
import { conversationSession } from "./chat-session.js";

export interface McpOptions {
  /** The workspace (`-C`, else the server's cwd). */
  dir: string;
  store?: StoreKind;
  version: string;
}

/** What the model reads once, at connection: when to reach for these tools. */
export const INSTRUCTIONS = [
  "ghostcommit snapshots this workspace's files before and after each of your turns.",
  "When the user asks to undo your work: call `log`, then `rewind {to}` with the first turn to undo",
  "(it and every later turn go back; your current turn stays open), then re-read the files it names",
  "before editing them again. `redo` puts back the last rewind of this turn; in a later turn, rewind",
  "to the turn that did the undo instead. A refusal lists conflicts (files changed since): ask the",
  "user before retrying with `force`. `snapshot` before risky work; `diff`/`restore` take snapshot ids.",
].join(" ");

/** The CLI's `--json` error document, as a tool error (never a protocol error or a crash). */
function failure(thrown: unknown, logged = true): CallToolResult {
  const error = reportable(thrown);
  const doc = errorDocument(error, "`force: true`");
  if (logged) process.stderr.write(`ghostcommit mcp: ${(doc.error as { message: string }).message}\n`);
  return result(doc, { isError: true });
}

/**
 * The tool calls being answered. Stopping refuses new ones and aborts those running: a restore,
 * rewind or redo still capturing or planning stops before it writes, one already writing finishes.
 */
export class McpCalls {
  private readonly running = new Map<Promise<unknown>, AbortController>();
  private stopped = false;

  get busy(): boolean {
    return this.running.size > 0;
  }

  /** Runs one call; `signal` aborts when the client cancels it or the server stops. */
  async run<T>(cancelled: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.stopped) throw new GhostcommitError("cancelled", "the server is stopping: nothing was changed");
    const controller = new AbortController();
    const signal = AbortSignal.any([cancelled, controller.signal]);
    const done = call(signal);
    this.running.set(done, controller);
    try {
      return await done;
    } finally {
      this.running.delete(done);
    }
  }

  /** Takes no more calls and resolves once every running one has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const controller of this.running.values()) controller.abort();
    await Promise.allSettled([...this.running.keys()]);
  }
}

/** Why `dir` is refused as a workspace (`$HOME`, `/`), or null. */
function refusedWorkspace(dir: string): string | null {
  return isTooBroad(dir)
    ? `not serving ${dir} (home or root directory): start the agent in a project directory, or give -C one`
    : null;
}

/**
 * Builds the server with its tools. `ancestors`: the processes above the server (its agent among
 * them), which tell a tool call naming no session which conversation it comes from.
 */
export function createMcpServer(
  options: McpOptions,
  ancestors: Promise<string[]> = processAncestors(),
  calls: McpCalls = new McpCalls(),
): McpServer {
  const server = new McpServer(
    { name: "ghostcommit", version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const refusal = refusedWorkspace(options.dir);
  const withWorkspace: WithWorkspace = (work) => async (args, ctx) => {
    // The client keeps the server's stderr out of sight: announcements go in the tool's answer.
    const announced: string[] = [];
    const stopCollecting = collectAnnouncements(announced);
    let answer: CallToolResult;
    try {
      if (refusal) throw new GhostcommitError("not-a-workspace", refusal, { path: options.dir });
      answer = await calls.run(ctx.mcpReq.signal, async (signal) =>
        work(await openWorkspace({ cwd: options.dir, store: options.store }), args, signal),
      );
    } catch (error) {
      // A refused workspace was said on stderr once, as the server started: not again per call.
      answer = failure(error, refusal === null);
    } finally {
      stopCollecting();
    }
    for (const text of announced) answer.content.push({ type: "text", text });
    return answer;
  };
  registerTools(server, withWorkspace, async (ws) => conversationSession(ws, await ancestors));
  registerRemoteTools(server, withWorkspace);
  return server;
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Stops on a signal once the calls being answered have ended (a client's close sends SIGTERM 2 s
 * after closing stdin; cut off, a rewind was left half-done with its locks). A second signal stops
 * at once, as it would without this handler.
 */
function stopOnSignals(calls: McpCalls): void {
  const stop = () => {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, stop);
    process.stdin.pause(); // no new requests are read
    if (calls.busy) process.stderr.write("ghostcommit mcp: finishing the tool call in progress first\n");
    // The answer is written before exiting (stdout to a pipe is synchronous), for a client still reading.
    calls.stop().then(() => setImmediate(() => process.exit(0)));
  };
  for (const signal of STOP_SIGNALS) process.once(signal, stop);
}

/** Serves MCP on stdin/stdout until the client closes stdin. Diagnostics go to stderr only. */
export async function serveMcp(options: McpOptions): Promise<void> {
  const refusal = refusedWorkspace(options.dir);
  if (refusal) process.stderr.write(`ghostcommit mcp: ${refusal}\n`);
  const ancestors = processAncestors(); // once: the agent that started the server stays the same
  const calls = new McpCalls();
  stopOnSignals(calls);
  await new Promise<void>((resolve) => {
    serveStdio(() => createMcpServer(options, ancestors, calls), {
      onerror: (error) => process.stderr.write(`ghostcommit mcp: ${error.message}\n`),
    });
    process.stdin.on("end", () => resolve());
    process.stdin.on("close", () => resolve());
  });
}
