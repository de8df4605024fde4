import { type CallToolResult, Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents as ev } from "./events.js";
import { hook } from "./hook-helpers.js";

// A tool's answer goes whole into the model's context: a diff of 40,000 files was 4.4 MB of text.
// Answers are cut to fit (Claude Code puts one over 50,000 characters in a file, and refuses one
// over 25,000 tokens), stay valid JSON, and say what was left out and where the rest is.
const CLIENT_FILE_LIMIT = 50_000;
const MANY = 3_000;

let sandbox: Sandbox;
let repo: Repo;
let client: Client;

beforeEach(async () => {
  sandbox = new Sandbox();
  repo = sandbox.packedRepo("repo", { "src/app.js": "v0\n", ...contents("v0") });
  const transport = new StdioClientTransport({
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

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const texts = (answer: CallToolResult) => answer.content.map((item) => (item as { text: string }).text);

/** The many files the repository tracks, `many/f0000.txt` on, in path order. */
const names = Array.from({ length: MANY }, (_, i) => `many/f${String(i).padStart(4, "0")}.txt`);
const contents = (version: string) => Object.fromEntries(names.map((name) => [name, `${version}\n`]));
const editMany = () => repo.write(contents("v1"));

/** A cut answer: small enough for the client, its document valid JSON, and the note after it. */
function expectCut(answer: CallToolResult, list: string): { doc: any; truncated: any } {
  expect(answer.isError, JSON.stringify(answer.content).slice(0, 500)).toBeFalsy();
  const [text, note] = texts(answer);
  expect(texts(answer).join("").length).toBeLessThan(CLIENT_FILE_LIMIT);
  const doc = JSON.parse(text);
  const truncated = (answer.structuredContent as { truncated: any }).truncated;
  expect(truncated.lists).toContainEqual({ list, shown: expect.any(Number), total: MANY });
  const { shown } = truncated.lists.find((l: { list: string }) => l.list === list);
  expect(shown).toBeGreaterThan(100);
  expect(shown).toBeLessThan(MANY);
  expect(truncated.leftOut).toBe(MANY - shown);
  expect(note).toContain("this answer was cut");
  expect(note).toContain(`\`${list}\` shows ${shown.toLocaleString("en-US")} of 3,000 entries`);
  expect(note).toContain(truncated.rest);
  return { doc, truncated };
}

describe("MCP answers fit the model's context", () => {
  it("a diff of thousands of files is cut, says how much was left out, and `paths` gets the rest", async () => {
    const base = (await call("snapshot")).structuredContent as { id: string };
    editMany();
    const answer = await call("diff", { id: base.id });
    const { doc, truncated } = expectCut(answer, "items");
    expect(Array.isArray(doc)).toBe(true); // the CLI's --json document, as before
    expect(doc.map((e: { path: string }) => e.path)).toEqual(names.slice(0, doc.length));
    expect((answer.structuredContent as { items: unknown[] }).items).toEqual(doc);
    expect(truncated.rest).toContain("`paths`");
    expect(truncated.rest).toContain(`ghostcommit diff ${base.id} --json`);

    const narrowed = await call("diff", { id: base.id, paths: [names[MANY - 1]] });
    expect(narrowed.content).toHaveLength(1);
    expect(narrowed.structuredContent).not.toHaveProperty("truncated");
    expect(JSON.parse(texts(narrowed)[0])).toMatchObject([{ path: names[MANY - 1], status: "modified" }]);
  });

  it("a restore of thousands of files does it all, and its cut report names the safety snapshot to diff", async () => {
    const base = (await call("snapshot")).structuredContent as { id: string };
    editMany();
    const answer = await call("restore", { id: base.id });
    const { doc, truncated } = expectCut(answer, "written");
    expect(names.every((name) => repo.read(name) === "v0\n")).toBe(true);
    expect(doc.truncated).toEqual(truncated); // an object says it in its text too
    expect(doc.written).toEqual(names.slice(0, doc.written.length));
    expect(doc.safety).toMatch(/^[0-9a-f]{40}$/);
    expect(truncated.rest).toContain(`\`diff {"id": "${doc.safety}"}\``);
  });

  it("a log keeps every turn and the short lists whole, cutting the one turn that changed thousands", async () => {
    const claude = (event: unknown) => expect(hook(sandbox, "claude-code", event, repo.dir).status).toBe(0);
    const turn = (prompt: string, work: () => void) => {
      claude(ev.prompt(repo.dir, "chat", prompt));
      work();
      claude(ev.ranBash(repo.dir, "chat", "node work.js")); // the agent's shell did the work
      claude(ev.stop(repo.dir, "chat"));
    };
    turn("rewrite all", editMany);
    turn("edit app", () => repo.write({ "src/app.js": "v1\n" }));
    turn("add b", () => repo.write({ "b.txt": "b\n" }));
    const answer = await call("log", { session: "chat" });
    const { doc } = expectCut(answer, "items[].changed");
    expect(doc.map((t: { turn: string }) => t.turn)).toEqual(["1", "2", "3"]);
    expect(doc.slice(1).map((t: { changed: string[] }) => t.changed)).toEqual([["src/app.js"], ["b.txt"]]);
    expect(answer.structuredContent).toMatchObject({ session: "chat", items: doc });

    // A refusal naming thousands of conflicts is an error, whose text Claude Code cuts at ~11,000.
    repo.write(contents("v2"));
    const refused = await call("rewind", { session: "chat", to: "1" });
    expect(refused.isError).toBe(true);
    expect(texts(refused).join("").length).toBeLessThan(11_000);
    const error = JSON.parse(texts(refused)[0]);
    expect(error.error.code).toBe("conflict");
    expect(error.truncated.lists).toEqual([
      { list: "conflicts", shown: error.conflicts.length, total: MANY },
    ]);
    expect(texts(refused)[1]).toContain("this answer was cut");
    expect(repo.read(names[0])).toBe("v2\n");
  });
});
