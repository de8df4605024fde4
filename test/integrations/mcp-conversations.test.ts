import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { ancestorsFromProc, ancestorsFromPs } from "../../src/util/process-tree.js";
import { claudeEvents as ev } from "./events.js";
import { agentHookEnv, installedCommand } from "./hook-helpers.js";

const FAKE_AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-agent.mjs");

/**
 * One running agent process (a Claude Code window): its hooks run through `/bin/sh -c` with the
 * bare environment agents give them, and its MCP server is its own child, as Claude Code starts
 * both. Requests go one at a time.
 */
class Agent {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: string[] = [];
  private waiting: ((line: string) => void) | null = null;

  constructor(sandbox: Sandbox, workspace: string) {
    const env = agentHookEnv(sandbox, { CLAUDE_PROJECT_DIR: workspace });
    const args = [FAKE_AGENT, workspace, installedCommand("claude-code"), JSON.stringify(env)];
    this.child = spawn(process.execPath, [...args, process.execPath, CLI], { env: sandbox.env });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      if (this.waiting) {
        this.waiting(line);
        this.waiting = null;
      } else this.answers.push(line);
    });
  }

  private request(body: unknown): Promise<any> {
    this.child.stdin.write(`${JSON.stringify(body)}\n`);
    return new Promise((resolve) => {
      const queued = this.answers.shift();
      if (queued !== undefined) resolve(JSON.parse(queued));
      else this.waiting = (line) => resolve(JSON.parse(line));
    });
  }

  async hook(event: object): Promise<void> {
    const run = await this.request({ hook: event });
    expect(run.status).toBe(0);
  }

  mcp(name: string, args: Record<string, unknown> = {}): Promise<any> {
    return this.request({ mcp: { name, arguments: args } });
  }

  close(): void {
    this.child.stdin.end();
  }
}

let sandbox: Sandbox;
let repo: Repo;
const agents: Agent[] = [];

beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "app.js": "v0\n" });
});
afterEach(() => {
  for (const agent of agents.splice(0)) agent.close();
  sandbox.cleanup();
});

function agent(): Agent {
  const made = new Agent(sandbox, repo.dir);
  agents.push(made);
  return made;
}

describe("the MCP server of one of two conversations in a workspace", () => {
  it("acts on its own conversation's session when a tool call names none, not the one active last", async () => {
    const [a, b] = [agent(), agent()];
    const cwd = repo.dir;
    await a.hook(ev.prompt(cwd, "chat-a", "add a"));
    repo.write({ "a.txt": "a\n" });
    await a.hook(ev.ranBash(cwd, "chat-a", "echo a > a.txt"));
    await a.hook(ev.stop(cwd, "chat-a"));
    await b.hook(ev.prompt(cwd, "chat-b", "add b"));
    repo.write({ "b.txt": "b\n" });
    await b.hook(ev.ranBash(cwd, "chat-b", "echo b > b.txt"));
    await b.hook(ev.stop(cwd, "chat-b"));
    // The user asks A to undo while B works on: B's tool calls make B the most recently active.
    await a.hook(ev.prompt(cwd, "chat-a", "undo that"));
    await b.hook(ev.prompt(cwd, "chat-b", "more b"));
    await b.hook(ev.write(cwd, "chat-b", repo.path("b2.txt")));
    repo.write({ "b2.txt": "b2\n" });
    expect(repo.cli(["sessions", "--json"]).json.map((s: { session: string }) => s.session)[0]).toBe(
      "chat-b",
    );

    const log = await a.mcp("log");
    expect(log.structuredContent.session).toBe("chat-a");
    expect(log.structuredContent.items.map((t: any) => `${t.turn}:${t.state}`)).toEqual(["1:done", "2:open"]);
    const rewind = await a.mcp("rewind", { to: "1" });
    expect(rewind.isError).toBeFalsy();
    expect(rewind.structuredContent.session).toBe("chat-a");
    expect(existsSync(repo.path("a.txt"))).toBe(false);
    // B's files and turns are as B left them.
    expect(repo.read("b.txt")).toBe("b\n");
    expect(repo.read("b2.txt")).toBe("b2\n");
    expect((await b.mcp("log")).structuredContent.items.map((t: any) => `${t.turn}:${t.state}`)).toEqual([
      "1:done",
      "2:open",
    ]);
    const redo = await a.mcp("redo");
    expect(redo.structuredContent.session).toBe("chat-a");
    expect(repo.read("a.txt")).toBe("a\n");
  });

  it("follows its conversation into the session `/clear` begins in the same agent process", async () => {
    const [a, b] = [agent(), agent()];
    const cwd = repo.dir;
    await a.hook(ev.prompt(cwd, "before-clear", "one"));
    repo.write({ "one.txt": "1\n" });
    await a.hook(ev.stop(cwd, "before-clear"));
    await a.hook(ev.prompt(cwd, "after-clear", "two"));
    repo.write({ "two.txt": "2\n" });
    await a.hook(ev.stop(cwd, "after-clear"));
    await b.hook(ev.prompt(cwd, "other", "three"));
    repo.write({ "three.txt": "3\n" });
    await b.hook(ev.stop(cwd, "other"));

    expect((await a.mcp("log")).structuredContent.session).toBe("after-clear");
    expect((await b.mcp("log")).structuredContent.session).toBe("other");
    // A session named in the call is used as named.
    expect((await b.mcp("log", { session: "before-clear" })).structuredContent.session).toBe("before-clear");
  });
});

describe("a process's ancestors", () => {
  it("are read from /proc, and from ps where there is no /proc, naming the same processes", async () => {
    const fromProc = await ancestorsFromProc(8);
    const fromPs = await ancestorsFromPs(8);
    expect(fromProc!.length).toBeGreaterThan(0);
    expect(fromProc![0].split(":")[0]).toBe(String(process.ppid));
    expect(fromPs.map((p) => p.split(":")[0])).toEqual(fromProc!.map((p) => p.split(":")[0]));
    // Start times are what tell a reused pid apart: present and stable from one read to the next.
    expect(await ancestorsFromProc(8)).toEqual(fromProc);
    expect(await ancestorsFromPs(8)).toEqual(fromPs);
  });
});
