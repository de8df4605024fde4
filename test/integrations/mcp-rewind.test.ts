import { type CallToolResult, Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents as ev } from "./events.js";
import { expectQuiet, hook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

let sandbox: Sandbox;
let repo: Repo;
let client: Client;

/** `ghostcommit mcp` in the repo, driven by the SDK's own client over stdio. */
async function connect(dir: string, extra: string[] = [], stderr?: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...extra],
    cwd: dir,
    env: sandbox.env as Record<string, string>,
    stderr: stderr ? "pipe" : "ignore",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr?.push(chunk.toString("utf8")));
  const c = new Client({ name: "ghostcommit-test", version: "1.0.0" });
  await c.connect(transport);
  return c;
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Claude Code's hook command, as the agent runs it for each event of session "chat". */
function claude(event: unknown): string {
  const result = hook(sandbox, "claude-code", event, repo.dir);
  expect(result.status).toBe(0);
  return result.stdout;
}

beforeEach(async () => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "src/app.js": "v0\n" });
  client = await connect(repo.dir);
});
afterEach(async () => {
  await client.close();
  sandbox.cleanup();
});

describe("undo from inside the agent (MCP)", () => {
  it("refuses a call with an option the tool does not take: a misspelt dryRun changes nothing", async () => {
    const s = "chat";
    claude(ev.prompt(repo.dir, s, "add a"));
    repo.write({ "src/app.js": "v1\n", "a.txt": "a\n" });
    claude(ev.ranBash(repo.dir, s, "node add-a.js"));
    claude(ev.stop(repo.dir, s));
    const snapshots = (await call("list_snapshots")).structuredContent as { items: { id: string }[] };
    // Before, unknown keys were dropped and these ran for real.
    for (const [name, args] of [
      ["rewind", { session: s, to: "1", dryrun: true }],
      ["restore", { id: snapshots.items.at(-1)!.id, dry_run: true }],
    ] as const) {
      const refused = await call(name, args);
      expect(refused.isError, name).toBe(true);
      expect(JSON.stringify(refused.content), name).toMatch(/dry_?run/);
      expect([repo.read("src/app.js"), repo.read("a.txt")]).toEqual(["v1\n", "a\n"]);
    }
    const tools = (await client.listTools()).tools;
    expect(tools.find((t) => t.name === "rewind")?.inputSchema.additionalProperties).toBe(false);
  });

  it("rewinds and redoes earlier turns during the agent's open turn, which stays open", async () => {
    const s = "chat";
    const cwd = repo.dir;
    claude(ev.prompt(cwd, s, "add a"));
    repo.write({ "src/app.js": "v1\n", "a.txt": "a\n" });
    claude(ev.ranBash(cwd, s, "node add-a.js"));
    claude(ev.stop(cwd, s));
    claude(ev.prompt(cwd, s, "add b"));
    claude(ev.write(cwd, s, repo.path("b.txt")));
    repo.write({ "src/app.js": "v2\n", "b.txt": "b\n" });
    claude(ev.ranBash(cwd, s, "node add-b.js"));
    claude(ev.stop(cwd, s));
    // The user types "undo that": the prompt hook opens turn 3 before the model acts.
    expectQuiet(hook(sandbox, "claude-code", ev.prompt(cwd, s, "undo that"), cwd));
    claude(ev.write(cwd, s, repo.path("notes.md")));
    repo.write({ "notes.md": "working on it\n" });
    claude(ev.wrote(cwd, s, repo.path("notes.md")));

    // A terminal's rewind still refuses: the open turn's agent may be writing.
    const terminal = repo.cli(["rewind", "--to", "2", "--json"]);
    expect(terminal.status).toBe(3);
    expect(terminal.json.error.code).toBe("open-turn");

    const log = (await call("log", {})).structuredContent as { session: string; items: any[] };
    expect(log.session).toBe(s);
    const turns = log.items.map((t: { turn: string; state: string }) => [t.turn, t.state]);
    expect(turns).toEqual([
      ["1", "done"],
      ["2", "done"],
      ["3", "open"],
    ]);
    const last = (await call("log", { limit: 1 })).structuredContent as { items: { turn: string }[] };
    expect(last.items.map((t) => t.turn)).toEqual(["3"]);

    // The open turn itself is not rewound from inside it.
    const self = await call("rewind", { to: "3" });
    expect(self.isError).toBe(true);
    expect(self.structuredContent).toMatchObject({ error: { code: "bad-input" } });

    // A path the open turn already changed is a conflict: nothing changes.
    repo.write({ "src/app.js": "edited in turn 3\n" });
    const refused = await call("rewind", { to: "2" });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { code: "conflict" },
      conflicts: ["src/app.js"],
    });
    expect(repo.read("b.txt")).toBe("b\n");
    repo.write({ "src/app.js": "v2\n" });

    // Chosen paths are forwarded to the library: a dry run of b.txt alone.
    const partial = await call("rewind", { to: "2", paths: ["b.txt"], dryRun: true });
    expect(partial.structuredContent).toMatchObject({ dryRun: true, written: [], deleted: ["b.txt"] });
    expect(repo.read("b.txt")).toBe("b\n");

    const rewound = await call("rewind", { to: "2" });
    expect(rewound.isError).toBeFalsy();
    const report = JSON.parse((rewound.content[0] as { text: string }).text);
    expect(rewound.structuredContent).toEqual(report);
    expect(report).toMatchObject({ session: s, to: "2", rewoundTurns: ["2"], deleted: ["b.txt"] });
    expect(report.written).toEqual(["src/app.js"]);
    expect(repo.read("src/app.js")).toBe("v1\n");
    expect(repo.exists("b.txt")).toBe(false);
    expect(repo.read("notes.md")).toBe("working on it\n");
    expect((await logIn(repo, s)).map((t: { state: string }) => t.state)).toEqual([
      "done",
      "rewound",
      "open",
    ]);

    const redone = await call("redo", {});
    expect(redone.isError).toBeFalsy();
    expect(redone.structuredContent).toMatchObject({ session: s, restoredTurns: ["2"] });
    expect(repo.read("src/app.js")).toBe("v2\n");
    expect(repo.read("b.txt")).toBe("b\n");
    expect((await logIn(repo, s)).map((t: { state: string }) => t.state)).toEqual(["done", "done", "open"]);

    // The model undoes again, the turn ends; the next prompt tells it what went back, once.
    expect((await call("rewind", { to: "2" })).isError).toBeFalsy();
    claude(ev.stop(cwd, s));
    const told = JSON.parse(claude(ev.prompt(cwd, s, "thanks, now add c")));
    const context: string = told.hookSpecificOutput.additionalContext;
    expect(told.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    expect(context).toContain("Rewound turn 2");
    expect(context).toContain("Redo restored turn 2");
    expect(context).toContain("- b.txt (deleted)");
    expect(context).toContain("- src/app.js");
    claude(ev.write(cwd, s, repo.path("c.txt")));
    repo.write({ "c.txt": "c\n" });
    claude(ev.stop(cwd, s));
    expect(claude(ev.prompt(cwd, s, "and d"))).toBe("");

    // A turn that changed files since has left no redo (a new turn discards it), but turn 3
    // recorded the undo as its own change: rewinding turn 3 brings turn 2's files back.
    expect((await call("redo", {})).structuredContent).toMatchObject({ error: { code: "nothing-to-redo" } });
    const back = await call("rewind", { to: "3" });
    expect(back.structuredContent).toMatchObject({ rewoundTurns: ["3", "4"] });
    expect([repo.read("src/app.js"), repo.exists("c.txt")]).toEqual(["v2\n", false]);
    expect(repo.read("b.txt")).toBe("b\n");
  });

  it("lists the paths in doubt under `uncertain` in a refusal, as the command line does", async () => {
    const cwd = repo.dir;
    claude(ev.prompt(cwd, "A", "a"));
    claude(ev.prompt(cwd, "B", "b"));
    repo.write({ "notes.md": "by a shell of one of them\n" });
    claude(ev.stop(cwd, "A"));
    claude(ev.stop(cwd, "B"));
    const refused = await call("rewind", { to: "1", session: "A" });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { code: "conflict" },
      conflicts: ["notes.md"],
      uncertain: ["notes.md"],
    });
    // The way past it is named as this tool names it, not as the command line's flag.
    const { message } = (refused.structuredContent as { error: { message: string } }).error;
    expect(message).toMatch(
      /nothing was changed; `paths` naming only the others rewinds those and leaves these as they are, `force: true` overwrites$/,
    );
    expect(message).not.toMatch(/--force/);
    expect(repo.read("notes.md")).toBe("by a shell of one of them\n");
  });

  it("from a subdirectory, names the -C that reaches the repository's sessions, as the command line does", async () => {
    repo.write({ "pkg/p.txt": "p0\n" });
    repo.ok("turn", "begin", "--session", "root-sess", "--turn", "1");
    repo.write({ "pkg/p.txt": "p1\n" });
    repo.ok("turn", "end", "--session", "root-sess", "--turn", "1");
    await client.close();
    const pkg = repo.path("pkg");
    client = await connect(pkg);
    const message = (r: CallToolResult) =>
      (r.structuredContent as { error: { message: string } }).error.message;
    const none = await call("log", {});
    expect(none.isError).toBe(true);
    expect(message(none)).toContain(`the repository's are reached with -C ${repo.dir}`);
    for (const [tool, args] of [
      ["log", { session: "root-sess" }],
      ["rewind", { session: "root-sess", to: "1" }],
      ["redo", { session: "root-sess" }],
    ] as const) {
      const named = await call(tool, args);
      expect(named.isError, tool).toBe(true);
      expect(message(named)).toBe(
        `session root-sess has no turns in ${pkg}: it is kept in ${repo.dir} (reach it with -C ${repo.dir})`,
      );
    }
    // The command line says the same from there.
    const cli = sandbox.cli(pkg, ["log", "--session", "root-sess"]);
    expect([cli.status, cli.stderr.trim()]).toEqual([
      1,
      `ghostcommit: session root-sess has no turns in ${pkg}: it is kept in ${repo.dir} (reach it with -C ${repo.dir})`,
    ]);
    expect(repo.read("pkg/p.txt")).toBe("p1\n");
  });

  it("refuses the home directory as a workspace, saying so on stderr once", async () => {
    await client.close();
    const stderr: string[] = [];
    client = await connect(sandbox.home, [], stderr);
    const refused = await call("snapshot", {});
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: { code: "not-a-workspace" } });
    const told = `not serving ${sandbox.home} (home or root directory): start the agent in a project directory, or give -C one`;
    expect((refused.structuredContent as { error: { message: string } }).error.message).toBe(told);
    expect((await call("list_snapshots", {})).isError).toBe(true);
    await client.close();
    expect(stderr.join("")).toBe(`ghostcommit mcp: ${told}\n`);
    // Named relative to where it runs (-C ..), it is said as the directory it is.
    await client.close();
    client = await connect(sandbox.dir("project"), ["-C", ".."]);
    const relative = await call("snapshot", {});
    expect((relative.structuredContent as { error: { message: string } }).error.message).toBe(told);
  });
});
