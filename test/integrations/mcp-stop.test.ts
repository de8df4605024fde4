import { type CallToolResult, Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents as ev } from "./events.js";
import { hook } from "./hook-helpers.js";

/** Enough files that a rewind of them takes a while: a signal or a cancel can land inside it. */
const FILES = 500;

let sandbox: Sandbox;
let repo: Repo;
let transport: StdioClientTransport;
let client: Client;

function claude(event: unknown): void {
  expect(hook(sandbox, "claude-code", event, repo.dir).status).toBe(0);
}

/** The workspace's store directories (one here). */
function stores(): string[] {
  const root = path.join(sandbox.env.GHOSTCOMMIT_HOME as string, "workspaces");
  return existsSync(root) ? readdirSync(root).map((key) => path.join(root, key)) : [];
}

/** Files in `dir` whose name `match` accepts; none if `dir` went meanwhile (a scratch directory). */
function filesIn(dir: string, match: (name: string) => boolean): string[] {
  try {
    return readdirSync(dir).filter(match);
  } catch {
    return [];
  }
}

/** A restore's journal, written just before its first file changes and removed after its last. */
const restoreJournals = () =>
  stores().flatMap((store) => filesIn(path.join(store, "tmp"), (n) => /^restore-\d+\.json$/.test(n)));
/** The restore lock, taken before the safety snapshot is captured. */
const restoreLocked = () => stores().some((store) => existsSync(path.join(store, "restore.ghostlock")));
/** Every lock of the store (the session journals' too). */
const locks = () =>
  stores().flatMap((store) =>
    readdirSync(store, { recursive: true, encoding: "utf8" }).filter((p) => p.endsWith(".ghostlock")),
  );

/** Polls every millisecond until `found` holds. */
async function waitFor(found: () => boolean, what: string, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!found()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function exited(pid: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > until) throw new Error(`server ${pid} still running`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const names = Array.from({ length: FILES }, (_, i) => `many/${i}.txt`);

/** Turn 1 of session "chat" changes every file from v0 to v1. */
function turnChangingFiles(): void {
  claude(ev.prompt(repo.dir, "chat", "change every file"));
  for (const name of names) writeFileSync(repo.path(name), "v1\n");
  claude(ev.ranBash(repo.dir, "chat", "node change-every-file.js"));
  claude(ev.stop(repo.dir, "chat"));
}

/** How many files hold `content`. */
const holding = (content: string) => names.filter((name) => repo.read(name) === content).length;
const rewound = () => holding("v0\n") === FILES;
const untouched = () => holding("v1\n") === FILES;

/** No lock or restore journal left behind, and doctor finds nothing wrong. */
function expectClean(): void {
  expect(locks()).toEqual([]);
  expect(restoreJournals()).toEqual([]);
  const doctor = repo.cli(["doctor", "--json"]);
  expect(doctor.json.problems ?? [], JSON.stringify(doctor.json)).toEqual([]);
  expect(doctor.status).toBe(0);
}

beforeEach(async () => {
  sandbox = new Sandbox();
  repo = sandbox.packedRepo("repo", Object.fromEntries(names.map((name) => [name, "v0\n"])));
  turnChangingFiles();
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    cwd: repo.dir,
    env: sandbox.env as Record<string, string>,
    stderr: "ignore",
  });
  client = new Client({ name: "ghostcommit-test", version: "1.0.0" });
  await client.connect(transport);
});
afterEach(async () => {
  await client.close();
  sandbox.cleanup();
});

describe("stopping the MCP server in the middle of a rewind", () => {
  it("finishes a rewind already writing files when SIGTERM comes, then exits", async () => {
    const pid = transport.pid as number;
    const answer = client.callTool({ name: "rewind", arguments: { to: "1" } }).catch((e: Error) => e);
    // The restore journal is on disk just before the first file changes.
    await waitFor(() => restoreJournals().length > 0, "the rewind to start writing");
    process.kill(pid, "SIGTERM");
    await exited(pid);
    // Before, the server died at once: part of the files were gone, the locks left behind.
    expect(rewound(), `${holding("v0\n")} of ${FILES} files rewound`).toBe(true);
    expect(((await answer) as CallToolResult).isError).toBeFalsy();
    expectClean();
  }, 20_000);

  it("stops a rewind still capturing on SIGTERM before any file changes, then exits", async () => {
    const pid = transport.pid as number;
    const answer = client.callTool({ name: "rewind", arguments: { to: "1" } }).catch((e: Error) => e);
    await waitFor(restoreLocked, "the rewind to take its lock");
    process.kill(pid, "SIGTERM");
    await exited(pid);
    const result = (await answer) as CallToolResult;
    // Either not started or finished: never half-done.
    if (result.isError) {
      expect(result.structuredContent).toMatchObject({ error: { code: "cancelled" } });
      expect(untouched()).toBe(true);
    } else {
      expect(rewound()).toBe(true);
    }
    expectClean();
    // Not started: the same rewind runs in full afterwards.
    expect(repo.cli(["rewind", "--to", "1", "--json"]).status).toBe(0);
    expect(rewound()).toBe(true);
  }, 20_000);

  it("leaves a rewind done or not started when the client closes (stdin, then SIGTERM 2 s later)", async () => {
    const pid = transport.pid as number;
    client.callTool({ name: "rewind", arguments: { to: "1" } }).catch(() => {});
    await waitFor(restoreLocked, "the rewind to take its lock");
    await client.close();
    await exited(pid);
    expect(rewound() || untouched(), `${holding("v0\n")} of ${FILES} files rewound`).toBe(true);
    expectClean();
  }, 20_000);

  it("exits at once on a second signal", async () => {
    const pid = transport.pid as number;
    client.callTool({ name: "rewind", arguments: { to: "1" } }).catch(() => {});
    await waitFor(restoreLocked, "the rewind to take its lock");
    process.kill(pid, "SIGTERM");
    process.kill(pid, "SIGINT");
    await exited(pid);
  }, 20_000);
});

describe("cancelling a tool call (notifications/cancelled)", () => {
  it("stops a rewind cancelled before its first file is written: nothing changes", async () => {
    const controller = new AbortController();
    const answer = client
      .callTool({ name: "rewind", arguments: { to: "1" } }, { signal: controller.signal })
      .catch((e: Error) => e);
    await waitFor(restoreLocked, "the rewind to take its lock");
    controller.abort();
    expect(await answer).toBeInstanceOf(Error);
    // A dry run waits for the session's lock, so it answers once the cancelled rewind has ended.
    const dry = (await client.callTool({
      name: "rewind",
      arguments: { to: "1", dryRun: true },
    })) as CallToolResult;
    expect(dry.isError).toBeFalsy();
    // Before, the rewind went on and deleted every file while the client had been told "cancelled".
    expect(untouched(), `${holding("v0\n")} of ${FILES} files rewound`).toBe(true);
    const log = (await client.callTool({ name: "log", arguments: {} })) as CallToolResult;
    expect((log.structuredContent as { items: { state: string }[] }).items.map((t) => t.state)).toEqual([
      "done",
    ]);
    expectClean();
  }, 20_000);
});
