import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { codex, cursor, gemini, PATCH } from "./events.js";
import { expectQuiet, hook, installedCommand, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { ".gitignore": "docs/\n", "src/app.js": "v1\n", "old.txt": "old\n" });
});
afterEach(() => sandbox.cleanup());

const log = (session: string): Promise<any[]> => logIn(repo, session);

describe("Codex hook adapter", () => {
  it("begins turn_id, touches apply_patch paths relative to cwd, ends on Stop, printing nothing", async () => {
    const s = "codex-1";
    const send = (event: unknown) => expectQuiet(hook(sandbox, "codex", event, repo.dir));
    send(codex(repo.dir, s, "SessionStart", { source: "startup" }));
    send(codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t-a", prompt: "apply the patch" }));
    send(
      codex(repo.dir, s, "PreToolUse", {
        turn_id: "t-a",
        tool_name: "apply_patch",
        tool_use_id: "call_1",
        tool_input: { command: PATCH },
      }),
    );
    // what apply_patch then does: docs/new.md is gitignored, captured because it was touched
    repo.write({ "docs/new.md": "# New\n", "src/main.js": "v2\n" });
    repo.remove("src/app.js");
    repo.remove("old.txt");
    send(
      codex(repo.dir, s, "Stop", { turn_id: "t-a", stop_hook_active: false, last_assistant_message: "done" }),
    );
    const [turn] = await log(s);
    expect(turn).toMatchObject({ turn: "t-a", state: "done", prompt: "apply the patch" });
    expect(turn.changed.sort()).toEqual(["docs/new.md", "old.txt", "src/app.js", "src/main.js"]);
    repo.ok("rewind", "--session", s, "--to", "t-a");
    expect(repo.read("src/app.js")).toBe("v1\n");
    expect(repo.read("old.txt")).toBe("old\n");
    expect(repo.exists("src/main.js")).toBe(false);
    expect(repo.exists("docs/new.md")).toBe(false);
  });
});

describe("Cursor hook adapter", () => {
  it("uses conversation_id, generation_id and workspace_roots[0], answering with Cursor's JSON", async () => {
    const c = "conv-1";
    const elsewhere = sandbox.dir("elsewhere");
    const send = (event: unknown) => hook(sandbox, "cursor", event, elsewhere);
    const begin = send(
      cursor(repo.dir, c, "beforeSubmitPrompt", { generation_id: "gen-1", prompt: "p1", attachments: [] }),
    );
    expect(begin.status).toBe(0);
    expect(JSON.parse(begin.stdout)).toEqual({ continue: true });
    repo.write({ "src/app.js": "v2\n" });
    const edit = send(
      cursor(repo.dir, c, "afterFileEdit", {
        generation_id: "gen-1",
        file_path: repo.path("src/app.js"),
        edits: [{ old_string: "v1", new_string: "v2" }],
      }),
    );
    expect(JSON.parse(edit.stdout)).toEqual({});
    const stop = send(
      cursor(repo.dir, c, "stop", { generation_id: "gen-1", status: "completed", loop_count: 0 }),
    );
    expect(JSON.parse(stop.stdout)).toEqual({});
    const [turn] = await log(c);
    // the after-edit touch must not overwrite the true before-state
    expect(turn).toMatchObject({ turn: "gen-1", state: "done", changed: ["src/app.js"] });
    repo.ok("rewind", "--session", c, "--to", "gen-1");
    expect(repo.read("src/app.js")).toBe("v1\n");
  });

  it("deletes on rewind a file the turn created and ignored before its after-edit report", () => {
    const c = "conv-env";
    const send = (event: unknown) => hook(sandbox, "cursor", event, repo.dir);
    send(cursor(repo.dir, c, "beforeSubmitPrompt", { generation_id: "g", prompt: "p", attachments: [] }));
    repo.write({ ".env": "API_KEY=real\n", ".gitignore": "docs/\n.env\n" }); // the agent's shell
    repo.write({ ".env": "API_KEY=x\n" });
    send(
      cursor(repo.dir, c, "afterFileEdit", { generation_id: "g", file_path: repo.path(".env"), edits: [] }),
    );
    send(cursor(repo.dir, c, "stop", { generation_id: "g", status: "completed", loop_count: 0 }));
    const report = repo.ok("rewind", "--session", c, "--to", "g");
    expect([report.written, report.deleted, report.skipped]).toEqual([[".gitignore"], [".env"], []]);
    expect([repo.exists(".env"), repo.read(".gitignore")]).toEqual([false, "docs/\n"]);
  });

  it("recognizes Cursor payloads arriving at the Claude Code adapter (third-party hooks)", async () => {
    const c = "conv-2";
    const begin = hook(
      sandbox,
      "claude-code",
      cursor(repo.dir, c, "beforeSubmitPrompt", { generation_id: "g7", prompt: "x" }),
      repo.dir,
    );
    expect(JSON.parse(begin.stdout)).toEqual({ continue: true });
    repo.write({ "src/app.js": "v3\n" });
    hook(
      sandbox,
      "claude-code",
      cursor(repo.dir, c, "stop", { generation_id: "g7", status: "completed" }),
      repo.dir,
    );
    expect(await log(c)).toMatchObject([{ turn: "g7", state: "done", changed: ["src/app.js"] }]);
  });
});

describe("Cursor stop of an earlier generation", () => {
  it("does not end the open generation's turn on a late or repeated stop of one that ended", async () => {
    // Cursor's hooks documentation: every event carries the `generation_id` it belongs to.
    const send = (generation: string, event: string, extra: Record<string, unknown> = {}) =>
      hook(
        sandbox,
        "cursor",
        cursor(repo.dir, "c6", event, { generation_id: generation, ...extra }),
        repo.dir,
      );
    send("ga", "beforeSubmitPrompt", { prompt: "A", attachments: [] });
    repo.write({ "a.txt": "a\n" });
    send("ga", "stop", { status: "completed", loop_count: 0 });
    send("gb", "beforeSubmitPrompt", { prompt: "B", attachments: [] });
    repo.write({ "b1.txt": "b1\n" });
    send("ga", "stop", { status: "completed", loop_count: 0 }); // delivered late, or again
    repo.write({ "b2.txt": "b2\n" });
    send("gb", "stop", { status: "completed", loop_count: 0 });
    expect((await log("c6")).map((t) => [t.turn, t.changed])).toEqual([
      ["ga", ["a.txt"]],
      ["gb", ["b1.txt", "b2.txt"]],
    ]);
    repo.ok("rewind", "--session", "c6", "--to", "gb");
    expect([repo.exists("b1.txt"), repo.exists("b2.txt")]).toEqual([false, false]);
  });
});

describe("Cursor multi-root workspace", () => {
  it("says, in doctor of the first folder and of the others, that only the first is snapshotted", () => {
    // Cursor's hooks documentation: every event carries `workspace_roots`, all the folders of the
    // workspace; Cursor runs user hooks in ~/.cursor. Here the notes folder comes first.
    const notes = sandbox.dir("notes");
    const roots = [notes, repo.dir];
    const home = sandbox.dir(".cursor");
    const send = (event: string, extra: Record<string, unknown>) =>
      expectQuiet(
        shellHook(
          sandbox,
          installedCommand("cursor"),
          cursor(notes, "c1", event, { ...extra, workspace_roots: roots }),
          home,
        ),
        event === "beforeSubmitPrompt" ? '{"continue":true}' : "{}",
      );
    send("beforeSubmitPrompt", { generation_id: "g1", prompt: "rename in app", attachments: [] });
    repo.write({ "src/app.js": "v2\n" });
    send("afterFileEdit", { generation_id: "g1", file_path: repo.path("src/app.js"), edits: [] });
    send("stop", { generation_id: "g1", status: "completed", loop_count: 0 });
    const edited = `not recorded: ${repo.path("src/app.js")} is in ${repo.dir}, a folder of this Cursor workspace other than the first (${notes}), which ghostcommit does not snapshot`;
    const problems = (dir: string) =>
      sandbox.cli(dir, ["doctor", "--json"]).json.problems.map((p: any) => p.message);
    // In the folder the agent edited, where no session ever ran.
    expect(problems(repo.dir)).toEqual([
      expect.stringContaining(`2 hook failures logged outside any workspace`),
    ]);
    expect(problems(repo.dir)[0]).toContain(edited);
    // The first folder's doctor says it once, from its own log: the global log's copy of the
    // same entries (for the other folder's doctor) is not counted again (found in a trial).
    expect(problems(notes)).toEqual([expect.stringContaining("2 hook failures in the last 7 days")]);
    expect(problems(notes)[0]).toContain(edited);
    const logged = readFileSync(path.join(sandbox.home, "data", "hooks.log"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(logged.map((e: any) => [e.dir, e.message])).toEqual([
      [
        repo.dir,
        `not snapshotted: ${repo.dir} is not the first folder of its Cursor workspace (${notes} is), and ghostcommit snapshots only the first, so edits here have no undo (open it as a workspace of its own for undo there)`,
      ],
      [repo.dir, edited],
    ]);
  });
});

describe("Gemini CLI hook adapter", () => {
  it("numbers its own turns 1, 2 and touches write_file/replace paths, answering {}", async () => {
    const s = "gem-1";
    const send = (event: unknown) => expectQuiet(hook(sandbox, "gemini", event, repo.dir), "{}");
    for (const n of [1, 2]) {
      send(gemini(repo.dir, s, "BeforeAgent", { prompt: `prompt ${n}` }));
      const tool = n === 1 ? "write_file" : "replace";
      const input =
        n === 1
          ? { file_path: repo.path("docs/g.md"), content: "g" }
          : { file_path: repo.path("src/app.js"), old_string: "v1", new_string: "v2" };
      send(gemini(repo.dir, s, "BeforeTool", { tool_name: tool, tool_input: input }));
      if (n === 1) repo.write({ "docs/g.md": "g\n" });
      else repo.write({ "src/app.js": "v2\n" });
      send(
        gemini(repo.dir, s, "AfterAgent", {
          prompt: `prompt ${n}`,
          prompt_response: "ok",
          stop_hook_active: false,
        }),
      );
    }
    expect((await log(s)).map((t) => [t.turn, t.state, t.changed])).toEqual([
      ["1", "done", ["docs/g.md"]],
      ["2", "done", ["src/app.js"]],
    ]);
    repo.ok("rewind", "--session", s, "--to", "1");
    expect(repo.exists("docs/g.md")).toBe(false);
    expect(repo.read("src/app.js")).toBe("v1\n");
  });
});
