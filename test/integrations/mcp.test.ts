import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type CallToolResult, Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, Repo, Sandbox } from "../helpers/repo.js";
import { listIn } from "../helpers/in-process.js";

const MAIN_JS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli/bin.js");

let sandbox: Sandbox;
let repo: Repo;
let client: Client;
let stderr: string;

/** Starts `ghostcommit mcp` for the repo through the SDK's own client and stdio transport. */
async function connect(cli: string, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "mcp", ...args],
    cwd: repo.dir,
    env: sandbox.env as Record<string, string>,
    stderr: "pipe",
  });
  stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const c = new Client({ name: "ghostcommit-test", version: "1.0.0" });
  await c.connect(transport);
  return c;
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The JSON document in a tool result's text content. */
function textJson(result: CallToolResult): any {
  const first = result.content[0];
  expect(first.type).toBe("text");
  return JSON.parse((first as { text: string }).text);
}

beforeEach(async () => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "README.md": "hello\n", "src/app.js": "v1\n" });
  client = await connect(CLI);
});
afterEach(async () => {
  await client.close();
  sandbox.cleanup();
});

describe("ghostcommit mcp", () => {
  it("lists its tools with annotations, input and output schemas, and gives instructions", async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const readers = ["diff", "list_snapshots", "log", "sessions"];
    const writers = ["redo", "restore", "rewind", "snapshot"];
    const remotes = ["fetch", "push"];
    expect(Object.keys(byName).sort()).toEqual([...readers, ...writers, ...remotes].sort());
    // The command line's help names the same tools.
    const help = repo.cli(["--help"]).stdout.replace(/\s+/g, " ");
    const named = /mcp \[options\] serve .*?\(tools: ([^)]*)\)/.exec(help)?.[1].split(", ");
    expect(named?.sort()).toEqual(Object.keys(byName).sort());
    // push and fetch reach a git remote; the others touch this machine only
    for (const name of remotes) expect(byName[name].annotations).toMatchObject({ openWorldHint: true });
    expect(Object.keys(byName.push.inputSchema.properties ?? {}).sort()).toEqual([
      "remote",
      "sessions",
      "snapshots",
    ]);
    for (const name of readers) {
      expect(byName[name].annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    }
    for (const name of writers) {
      expect(byName[name].annotations).toMatchObject({ readOnlyHint: false, openWorldHint: false });
    }
    expect(byName.restore.annotations?.destructiveHint).toBe(true);
    expect(byName.rewind.annotations?.destructiveHint).toBe(true);
    expect(byName.redo.annotations?.destructiveHint).toBe(true); // it deletes what the turns deleted
    expect(byName.snapshot.annotations?.destructiveHint).toBe(false);
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe("object");
    expect(Object.keys(byName.log.outputSchema?.properties ?? {}).sort()).toEqual([
      "items",
      "session",
      "truncated",
    ]);
    expect(Object.keys(byName.rewind.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining(["rewoundTurns", "written", "deleted", "safety"]),
    );
    expect(Object.keys(byName.snapshot.inputSchema.properties ?? {}).sort()).toEqual(["include", "message"]);
    expect(Object.keys(byName.rewind.inputSchema.properties ?? {}).sort()).toEqual([
      "dryRun",
      "force",
      "paths",
      "session",
      "to",
    ]);
    expect(Object.keys(byName.redo.inputSchema.properties ?? {}).sort()).toEqual(["force", "session"]);
    expect(byName.diff.inputSchema.required).toEqual(["id"]);
    expect(byName.restore.inputSchema.required).toEqual(["id"]);
    expect(byName.rewind.inputSchema.required).toEqual(["to"]);
    expect(client.getInstructions()).toMatch(/rewind/);
  });

  it("snapshot, list, diff and restore return the CLI's --json documents", async () => {
    const snap = await call("snapshot", { message: "before the refactor" });
    expect(snap.isError).toBeFalsy();
    const taken = textJson(snap);
    expect(taken).toMatchObject({ message: "before the refactor", fileCount: 2 });
    expect(taken.id).toMatch(/^[0-9a-f]{40}$/);
    expect(snap.structuredContent).toEqual(taken);

    const listed = await call("list_snapshots");
    expect(textJson(listed)).toEqual(await listIn(repo));
    expect(listed.structuredContent).toEqual({ items: textJson(listed) });

    repo.write({ "src/app.js": "v2\n", "new.txt": "n\n" });
    const diff = textJson(await call("diff", { id: taken.id.slice(0, 7) }));
    expect(diff).toEqual(repo.ok("diff", taken.id));
    expect(diff.map((d: { path: string; status: string }) => `${d.status} ${d.path}`).sort()).toEqual([
      "added new.txt",
      "modified src/app.js",
    ]);

    const plan = textJson(await call("restore", { id: taken.id, dryRun: true }));
    expect(plan).toMatchObject({ dryRun: true, safety: null, deleted: ["new.txt"], written: ["src/app.js"] });
    expect(repo.read("src/app.js")).toBe("v2\n");

    const restored = textJson(await call("restore", { id: taken.id }));
    expect(restored.safety).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.read("src/app.js")).toBe("v1\n");
    expect(repo.exists("new.txt")).toBe(false);

    // diff between two snapshots
    const between = textJson(await call("diff", { id: taken.id, id2: restored.safety }));
    expect(between).toHaveLength(2);
  });

  it("snapshot include captures an ignored path", async () => {
    repo.write({ ".gitignore": "secret.env\n", "secret.env": "KEY=1\n" });
    const taken = textJson(await call("snapshot", { include: ["secret.env"] }));
    expect(repo.ok("show", taken.id).files).toContain("secret.env");
  });

  it("unknown ids and paths outside the workspace are tool errors with the CLI's error document", async () => {
    const unknown = await call("restore", { id: "deadbeefdeadbeef" });
    expect(unknown.isError).toBe(true);
    expect(textJson(unknown).error.code).toBe("not-found");
    const unknownSession = await call("log", { session: "nope" });
    expect([unknownSession.isError, textJson(unknownSession).error.code]).toEqual([true, "not-found"]);
    // An empty one (a client's unset variable) is no session, not "the latest": refused.
    for (const [tool, args] of [
      ["log", { session: "" }],
      ["rewind", { session: "", to: "1", dryRun: true }],
      ["redo", { session: "" }],
    ] as const) {
      const empty = await call(tool, args);
      expect(empty.isError).toBe(true);
      expect(textJson(empty).error).toEqual({
        code: "usage",
        message:
          "the `session` argument needs a session id, not an empty string (an unset variable?); leave it out for the most recently active session",
      });
    }
    const outside = await call("snapshot", { include: ["../elsewhere"] });
    expect(outside.isError).toBe(true);
    expect(textJson(outside).error.code).toBe("outside-workspace");
    const malformed = await call("diff", { id: "xyz" });
    expect(malformed.isError).toBe(true);
    // No session at all: naming one cannot help, so the refusal says what starts one.
    const noSession = textJson(await call("log", {})).error;
    expect(noSession).toEqual({
      code: "no-session",
      message:
        "this workspace has no session with a turn yet: an agent's hooks (`ghostcommit install <agent>`) or `ghostcommit turn begin` start one",
    });
    // the server is still serving
    expect((await call("list_snapshots")).isError).toBeFalsy();
  });

  it("bad arguments are tool errors, not crashes", async () => {
    const missing = await call("diff", {});
    expect(missing.isError).toBe(true);
    const wrongType = await call("restore", { id: 42, dryRun: "yes" });
    expect(wrongType.isError).toBe(true);
    const snap = await call("snapshot", { include: "not-a-list" });
    expect(snap.isError).toBe(true);
    expect((await call("list_snapshots")).isError).toBeFalsy();
  });

  it("works from the unbundled CLI too, with -C naming the workspace and logs only on stderr", async () => {
    await client.close();
    const other = sandbox.repo("other", { "x.txt": "x\n" });
    client = await connect(MAIN_JS, ["-C", other.dir]);
    const taken = textJson(await call("snapshot"));
    expect((await listIn(other)).map((s: { id: string }) => s.id)).toContain(taken.id);
    expect(await listIn(repo)).toEqual([]);
    await call("restore", { id: "0000000" });
    expect(stderr).toContain("ghostcommit mcp:");
  });

  it("pushes and fetches session history to a configured remote, never to a URL the model names", async () => {
    const bare = path.join(sandbox.home, "remote.git");
    sandbox.git(sandbox.home, "init", "-q", "--bare", bare);
    repo.git("remote", "add", "origin", bare);
    repo.ok("turn", "begin", "--session", "s1", "--turn", "1", "--prompt", "edit");
    repo.write({ "src/app.js": "v2\n" });
    repo.ok("turn", "end", "--session", "s1", "--turn", "1");
    const pushed = await call("push", {});
    expect(pushed.isError, JSON.stringify(pushed.content)).toBeFalsy();
    expect(pushed.structuredContent).toMatchObject({
      remote: "origin",
      sessions: [{ session: "s1", turns: 1 }],
    });
    expect(sandbox.git(bare, "for-each-ref", "--format=%(refname)", "refs/ghostcommit/")).toContain(
      "/sessions/",
    );
    // a URL or a path is refused before anything runs
    for (const remote of [`file://${bare}`, bare, "../remote.git"]) {
      const refused = await call("push", { remote });
      expect(refused.isError, remote).toBe(true);
    }
    // Names that git would take as paths are refused too: "." is the user's own repository, and a
    // bare repository's directory name in the workspace is a place the model chose.
    sandbox.git(repo.dir, "init", "-q", "--bare", "exfil.git");
    const userRefs = repo.git("for-each-ref");
    for (const remote of [".", "..", "exfil.git"]) {
      for (const tool of ["push", "fetch"]) {
        const refused = await call(tool, { remote });
        expect(refused.isError, `${tool} ${remote}`).toBe(true);
        expect(JSON.stringify(refused.content)).toContain(
          `no remote named ${remote} in the repository's configuration`,
        );
      }
    }
    expect(repo.git("for-each-ref")).toEqual(userRefs);
    expect(sandbox.git(repo.path("exfil.git"), "for-each-ref")).toBe("");
    // a second clone fetches it through the same tool
    await client.close();
    const clone = path.join(sandbox.home, "clone");
    sandbox.git(sandbox.home, "clone", "-q", bare, clone);
    repo = new Repo(sandbox, clone); // the server runs in the clone
    client = await connect(CLI);
    const fetched = await call("fetch", {});
    expect(fetched.isError, JSON.stringify(fetched.content)).toBeFalsy();
    expect(fetched.structuredContent).toMatchObject({ sessions: [{ session: "s1", status: "created" }] });
    expect(textJson(await call("sessions")).map((s: { session: string }) => s.session)).toEqual(["s1"]);
  });

  // A client keeps the server's stderr out of the user's sight (Claude Code: only in its debug
  // logs): a Watchman watch a tool call starts is told in that call's answer.
  const watchman = spawnSync("watchman", ["--version"]).status === 0;
  (watchman ? it : it.skip)(
    "tells in the tool's answer that a snapshot started a Watchman watch",
    async () => {
      await client.close();
      const config = path.join(sandbox.env.XDG_CONFIG_HOME!, "ghostcommit", "config.json");
      writeFileSync(config, JSON.stringify({ watchman: true }));
      client = await connect(CLI);
      try {
        const first = await call("snapshot", {});
        expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
        expect(first.content).toHaveLength(2);
        expect(first.content[1]).toMatchObject({ type: "text" });
        expect((first.content[1] as { text: string }).text).toContain(
          `ghostcommit: Watchman now watches ${repo.dir}`,
        );
        expect(stderr).not.toContain("Watchman now watches");
        expect(textJson(first).id).toMatch(/^[0-9a-f]{40}$/); // the document stays the first content
        const second = await call("snapshot", {});
        expect(second.content).toHaveLength(1); // told once
      } finally {
        spawnSync("watchman", ["--no-spawn", "watch-del", repo.dir]);
      }
    },
  );
});
