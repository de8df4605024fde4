import { type CallToolResult, Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents as ev } from "./events.js";
import { hook } from "./hook-helpers.js";

/** Enough files that a rewind of them takes a while: a signal or a cancel can land inside it. */
const FILES = 1000;

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

const names = Array.from({ length: FILES }, (_, i) => `many/${i}.txt`);

/** Turn 1 of session "chat" changes every file from v0 to v1. */
function turnChangingFiles(): void {
  claude(ev.prompt(repo.dir, "chat", "change every file"));
  for (const name of names) writeFileSync(repo.path(name), "v1\n");
  claude(ev.stop(repo.dir, "chat"));
}

/** How many files hold `content`. */
const holding = (content: string) => names.filter((name) => repo.read(name) === content).length;
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
