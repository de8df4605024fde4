import { readdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Repo, Sandbox } from "../helpers/repo.js";
import { SCRIPTS } from "./agent-events.js";
import { claude, codex, cursor } from "./events.js";
import { expectQuiet, installedCommand, shellHook, storeCount } from "./hook-helpers.js";
import { logIn, doctorIn } from "../helpers/in-process.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", {
    ".gitignore": ".env\n",
    "README.md": "readme\n",
    "notes.md": "n0\n",
    "src/app.js": "v0\n",
    "packages/x/index.js": "x0\n",
  });
  repo.write({ "packages/x/.env": "KEY=old\n" });
});
afterEach(() => sandbox.cleanup());

const log = (session: string): Promise<any[]> => logIn(repo, session);

/** What each agent must read on stdout: Cursor lets a prompt through explicitly, Gemini parses JSON. */
function replyOf(agent: string, event: unknown): string {
  if (agent === "gemini") return "{}";
  if (agent !== "cursor") return "";
  return (event as { hook_event_name?: string }).hook_event_name === "beforeSubmitPrompt"
    ? '{"continue":true}'
    : "{}";
}

describe.each(SCRIPTS)("$agent hooks in a real session", (script) => {
  /** Runs the installed command through `env -i PATH=/usr/bin:/bin /bin/sh -c`, as agents do. */
  const send = (event: unknown, cwd = repo.dir, env: Record<string, string> = {}) => {
    if (event === null) return;
    expectQuiet(
      shellHook(sandbox, installedCommand(script.agent), event, cwd, env),
      replyOf(script.agent, event),
    );
  };
  const root = () => repo.dir;

  it("keeps one workspace across cd, extends a blocked stop's turn, and never reverts a user's edit after an interrupt", async () => {
    const s = `${script.agent}-session`;
    const sub = repo.path("packages/x");
    // Claude Code: CLAUDE_PROJECT_DIR names the project even when the event's cwd does not.
    const env: Record<string, string> = script.agent === "claude-code" ? { CLAUDE_PROJECT_DIR: root() } : {};
    const first = script.agent === "claude-code" ? sub : root();
    send(script.begin(first, s, 1, root()), first, env);
    // Turn 1 works from packages/x. Codex sends patch paths relative to its cwd.
    const readme = script.agent === "codex" ? "../../README.md" : repo.path("README.md");
    const secret = repo.path("packages/x/.env");
    send(script.pre(sub, s, readme, root()), sub, env);
    send(script.pre(sub, s, secret, root()), sub, env);
    repo.write({ "README.md": "agent\n", "packages/x/.env": "KEY=agent\n" });
    send(script.post(sub, s, readme, root()), sub, env);
    send(script.post(sub, s, secret, root()), sub, env);
    send(script.stop(sub, s, root()), sub, env);
    // Another hook blocked that stop: the agent goes on, then stops again with stop_hook_active.
    const blocked = script.stop(sub, s, root(), true);
    if (blocked) {
      // Its tool writes a file, reported as the agent reports any edit.
      const created = repo.path("src/new.js");
      send(script.pre(sub, s, created, root()), sub, env);
      repo.write({ "src/new.js": "new\n" });
      send(script.post(sub, s, created, root()), sub, env);
      send(blocked, sub, env);
    }

    // Turn 2: an edit tool, a shell tool, then Esc (no stop event) and the user's own edit.
    const app = repo.path("src/app.js");
    send(script.begin(root(), s, 2, root()));
    send(script.pre(root(), s, app, root()));
    repo.write({ "src/app.js": "v1\n" });
    send(script.post(root(), s, app, root()));
    const shell = script.shell(root(), s, "node gen.js > src/gen.txt", root());
    if (shell) {
      repo.write({ "src/gen.txt": "generated\n" });
      send(shell);
    }
    repo.write({ "notes.md": "mine\n" });
    send(script.begin(root(), s, 3, root()));
    send(script.stop(root(), s, root()));

    expect(storeCount(sandbox)).toBe(1);
    const turns = await log(s);
    expect(turns.map((t) => [t.turn, t.state])).toEqual([
      [script.turnId(1), "done"],
      [script.turnId(2), "done"],
      [script.turnId(3), "done"],
    ]);
    expect(turns[0].changed).toEqual(["README.md", "packages/x/.env", ...(blocked ? ["src/new.js"] : [])]);
    expect(turns[1].uncertain).toEqual(["notes.md"]);
    const uncertain = repo.cli(["rewind", "--session", s, "--to", script.turnId(2), "--json"]);
    expect(uncertain.status).toBe(3);
    expect(uncertain.json.conflicts).toEqual(["notes.md"]);
    expect(uncertain.json.afterLastTool).toEqual(["notes.md"]);
    expect(repo.cli(["rewind", "--session", s, "--to", script.turnId(2)]).stderr).toContain(
      `1 file was changed by none of session ${s}'s tool calls (after the last one that could have changed it, or before the agent edited it), so it may be a person's edit or another session's (notes.md)`,
    );
    expect(repo.read("notes.md")).toBe("mine\n");
    repo.ok("rewind", "--session", s, "--to", script.turnId(2), "--force");
    expect([repo.read("notes.md"), repo.read("src/app.js"), repo.exists("src/gen.txt")]).toEqual([
      "n0\n",
      "v0\n",
      false,
    ]);

    const rewind = repo.cli(["rewind", "--session", s, "--to", script.turnId(1), "--json"]);
    expect(repo.read("README.md")).toBe("readme\n");
    expect(repo.exists("src/new.js")).toBe(false);
    if (script.agent === "cursor") {
      // afterFileEdit comes after the write: the ignored file's old content was never seen.
      expect(rewind.json.skipped).toEqual([{ path: "packages/x/.env", reason: "not-captured" }]);
      expect(rewind.json.written).toEqual(["README.md"]);
      // A documented limit, not a path that could not be written: status 0 (SPEC §4).
      expect(rewind.status).toBe(0);
      expect(repo.read("packages/x/.env")).toBe("KEY=agent\n");
    } else {
      expect(rewind.status).toBe(0);
      expect(repo.read("packages/x/.env")).toBe("KEY=old\n");
    }
  });
});

describe("hooks across sessions and outside projects", () => {
  const send = (event: unknown, cwd: string, agent = "claude-code") =>
    expectQuiet(shellHook(sandbox, installedCommand(agent), event, cwd), replyOf(agent, event));

  it("points from a repository inside a plain directory to the session an agent started at the top", async () => {
    // A folder of repositories (fe/ and be/ side by side, SPEC §10): the agent works at the top,
    // a person runs log from one of the repositories, which is a workspace of its own.
    const mono = sandbox.dir("mono");
    const fe = sandbox.repo("mono/fe", { "app.js": "fe0\n" });
    const be = sandbox.repo("mono/be", { "api/server.py": "be0\n" });
    send(claude(mono, "m1", "UserPromptSubmit", { prompt: "both sides" }), mono);
    fe.write({ "app.js": "fe1\n" });
    send(claude(mono, "m1", "Stop", { stop_hook_active: false }), mono);
    const pointer = `-C ${mono} has session m1`;
    const log = fe.cli(["log"]);
    expect([log.status, log.stderr.trim()]).toEqual([
      1,
      `ghostcommit: this workspace has no session with a turn yet (an agent started in a directory around this one keeps its sessions there: ${pointer})`,
    ]);
    // From a subdirectory of the other repository: past the repository's root, to the top.
    const sessions = sandbox.cli(be.path("api"), ["sessions"]);
    expect(sessions.stdout.trim()).toBe(
      `no sessions of ${be.path("api")} yet (a subdirectory keeps its own sessions: the repository's are reached with -C ${be.dir}; ${pointer})`,
    );
    expect(sandbox.ok(mono, "log").map((t: any) => t.changed)).toEqual([["fe/app.js"]]);
  });

  it("doubts a Cursor edit of a file another session changed beside it: Cursor reports an edit only after it, so the file's bytes just before it are unknown", () => {
    // Cursor's generation begins; a Claude Code session beside it edits notes.md with its tools
    // and ends; then Cursor edits notes.md and src/app.js (afterFileEdit, after the write). A
    // rewind of Cursor's turn would put back notes.md as it was before either session, reverting
    // the other session's finished work without a word (SPEC §8: uncertain is a conflict).
    const generation = (event: string, extra: Record<string, unknown> = {}) =>
      cursor(repo.dir, "cur", event, { generation_id: "gen-1", ...extra });
    send(generation("beforeSubmitPrompt", { prompt: "tidy", attachments: [] }), repo.dir, "cursor");
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    const edit = { tool_name: "Edit", tool_input: { file_path: repo.path("notes.md") }, tool_use_id: "b1" };
    send(claude(repo.dir, "B", "PreToolUse", edit), repo.dir);
    repo.write({ "notes.md": "n0\nB's line\n" });
    send(claude(repo.dir, "B", "PostToolUse", { ...edit, tool_response: { success: true } }), repo.dir);
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    repo.write({ "notes.md": "n0\nB's line\nCursor's line\n", "src/app.js": "cursor\n" });
    for (const file of ["notes.md", "src/app.js"]) {
      send(generation("afterFileEdit", { file_path: repo.path(file), edits: [] }), repo.dir, "cursor");
    }
    send(generation("stop", { status: "completed", loop_count: 0 }), repo.dir, "cursor");

    const refused = repo.cli(["rewind", "--session", "cur", "--to", "gen-1", "--json"]);
    expect([refused.status, refused.json.uncertain]).toEqual([3, ["notes.md"]]);
    expect(repo.read("notes.md")).toBe("n0\nB's line\nCursor's line\n");
    // A file nobody else changed meanwhile is the turn's own, rewound as ever.
    const own = repo.cli(["rewind", "--session", "cur", "--to", "gen-1", "--json", "--", "src/app.js"]);
    expect([own.status, own.json.written], own.stderr).toEqual([0, ["src/app.js"]]);
    expect(repo.read("src/app.js")).toBe("v0\n");
    // Nor does the other session's rewind go over Cursor's later line.
    expect(repo.cli(["rewind", "--session", "B", "--to", "1"]).status).toBe(3);
    expect(repo.read("notes.md")).toBe("n0\nB's line\nCursor's line\n");
  });

  it("says an edit reported while no turn was open cannot be undone: its prompt event never came (hooks installed mid-conversation)", async () => {
    // Cursor runs hooks installed during a conversation from the next event on: an edit and a stop
    // of a generation whose beforeSubmitPrompt no hook saw.
    repo.write({ "notes.md": "edited\n" });
    const generation = { generation_id: "gen-7" };
    send(
      cursor(repo.dir, "late", "afterFileEdit", {
        ...generation,
        file_path: repo.path("notes.md"),
        edits: [],
      }),
      repo.dir,
      "cursor",
    );
    send(
      cursor(repo.dir, "late", "stop", { ...generation, status: "completed", loop_count: 0 }),
      repo.dir,
      "cursor",
    );
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(JSON.stringify(doctor.json.problems)).toContain(
      "not undoable: notes.md, named by an edit tool while no turn was open (the agent sent no prompt event before it",
    );
    // The next prompt begins a turn as ever, and its edits are undoable.
    send(
      cursor(repo.dir, "late", "beforeSubmitPrompt", {
        generation_id: "gen-8",
        prompt: "p",
        attachments: [],
      }),
      repo.dir,
      "cursor",
    );
    repo.write({ "src/app.js": "v1\n" });
    send(
      cursor(repo.dir, "late", "afterFileEdit", {
        generation_id: "gen-8",
        file_path: repo.path("src/app.js"),
        edits: [],
      }),
      repo.dir,
      "cursor",
    );
    send(
      cursor(repo.dir, "late", "stop", { generation_id: "gen-8", status: "completed", loop_count: 0 }),
      repo.dir,
      "cursor",
    );
    expect((await log("late")).map((t) => [t.turn, t.changed])).toEqual([["gen-8", ["src/app.js"]]]);
  });

  it("ends turns on Claude Code's StopFailure and Codex's Interrupt", async () => {
    send(claude(repo.dir, "c1", "UserPromptSubmit", { prompt: "p" }), repo.dir);
    repo.write({ "src/app.js": "v1\n" });
    send(
      claude(repo.dir, "c1", "StopFailure", {
        error_type: "rate_limit",
        error: "429",
        error_message: "slow down",
      }),
      repo.dir,
    );
    expect((await log("c1"))[0]).toMatchObject({ state: "done", changed: ["src/app.js"] });
    const codexEvent = SCRIPTS[1];
    send(codexEvent.begin(repo.dir, "x1", 1, repo.dir), repo.dir, "codex");
    repo.write({ "notes.md": "n1\n" });
    send(
      { ...(codexEvent.begin(repo.dir, "x1", 1, repo.dir) as object), hook_event_name: "Interrupt" },
      repo.dir,
      "codex",
    );
    expect((await log("x1"))[0]).toMatchObject({ state: "done", changed: ["notes.md"] });
  });

  it("ends a Codex turn on StopFailure (an API error), which install registers and a second install adds", async () => {
    const file = repo.ok("install", "codex", "--project").file;
    const settings = JSON.parse(readFileSync(file, "utf8"));
    const command = settings.hooks.StopFailure[0].hooks[0].command;
    const run = (event: unknown) => expectQuiet(shellHook(sandbox, command, event, repo.dir));
    run(codex(repo.dir, "s1", "UserPromptSubmit", { turn_id: "t1", prompt: "p" }));
    repo.write({ "src/app.js": "v1\n" });
    run(
      codex(repo.dir, "s1", "StopFailure", {
        turn_id: "t1",
        error: "rate_limit",
        error_details: "429 Too Many Requests",
        last_assistant_message: null,
      }),
    );
    expect((await log("s1"))[0]).toMatchObject({ turn: "t1", state: "done", changed: ["src/app.js"] });
    expect(repo.cli(["rewind", "--session", "s1", "--to", "t1"]).status).toBe(0);
    expect(repo.read("src/app.js")).toBe("v0\n");
    // An install from before StopFailure: doctor says so, and install again adds only it.
    delete settings.hooks.StopFailure;
    writeFileSync(file, JSON.stringify(settings, null, 2));
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toEqual([
      expect.objectContaining({
        code: "hook-install-outdated",
        message: `the Codex hooks in ${file} lack StopFailure; run \`ghostcommit install codex --project\` again`,
      }),
    ]);
    expect(repo.ok("install", "codex", "--project")).toMatchObject({
      changed: true,
      events: ["StopFailure"],
    });
    expect((await doctorIn(repo)).ok).toBe(true);
    // Matchers in the syntax of Codex's own regular expressions (an inline flag) cover its tools too.
    const mended = JSON.parse(readFileSync(file, "utf8"));
    for (const event of ["PreToolUse", "PostToolUse"])
      mended.hooks[event][0].matcher = "(?i)^APPLY_PATCH|edit|write|bash$";
    writeFileSync(file, JSON.stringify(mended, null, 2));
    expect((await doctorIn(repo)).problems).toEqual([]);
  });

  it("keeps a session's turns when the agent's `git init` makes the folder a repository mid-turn", async () => {
    // A new project: the folder is plain at the first prompts, a repository by the second Stop.
    const proj = new Repo(sandbox, sandbox.dir("proj"));
    proj.write({ "keep.txt": "keep\n" });
    const run = (event: unknown) => shellHook(sandbox, installedCommand("claude-code"), event, proj.dir);
    // The agent's shell does each turn's work: its PostToolUse marks it.
    const shellDone = () =>
      expectQuiet(
        run(
          claude(proj.dir, "g1", "PostToolUse", {
            tool_name: "Bash",
            tool_input: { command: "make" },
            tool_response: {},
          }),
        ),
      );
    expectQuiet(run(claude(proj.dir, "g1", "UserPromptSubmit", { prompt: "write the app" })));
    proj.write({ "app.js": "app\n" });
    shellDone();
    expectQuiet(run(claude(proj.dir, "g1", "Stop", { stop_hook_active: false })));
    expectQuiet(run(claude(proj.dir, "g1", "UserPromptSubmit", { prompt: "set up git" })));
    sandbox.git(proj.dir, "init", "-q");
    proj.write({ ".gitignore": "dist/\n", "dist/app.min.js": "built\n", "app.js": "app v2\n" });
    shellDone();
    // The turn begun in the plain folder ends in the repository, nothing to tell.
    expectQuiet(run(claude(proj.dir, "g1", "Stop", { stop_hook_active: false })));
    expectQuiet(run(claude(proj.dir, "g1", "UserPromptSubmit", { prompt: "third" })));
    proj.write({ "app.js": "app v3\n" });
    shellDone();
    expectQuiet(run(claude(proj.dir, "g1", "Stop", { stop_hook_active: false })));
    const turns = await logIn(proj, "g1");
    expect(turns.map((t: any) => [t.state, t.changed])).toEqual([
      ["done", ["app.js"]],
      ["done", [".gitignore", "app.js"]],
      ["done", ["app.js"]],
    ]);
    // Back to before the first turn: the repository itself, and what git ignores, stay.
    const rewind = proj.ok("rewind", "--session", "g1", "--to", turns[0].turn);
    expect(rewind.rewoundTurns).toEqual(turns.map((t: any) => t.turn));
    expect(readdirSync(proj.dir).sort()).toEqual([".git", "dist", "keep.txt"]);
    proj.ok("redo", "--session", "g1");
    expect([proj.read("app.js"), proj.read(".gitignore")]).toEqual(["app v3\n", "dist/\n"]);

    // Its .git removed mid-session: the folder's plain store comes back, without the later turns.
    rmSync(proj.path(".git"), { recursive: true });
    const prompt = run(claude(proj.dir, "g1", "UserPromptSubmit", { prompt: "fourth" }));
    expect(prompt.status).toBe(0);
    const told = JSON.parse(prompt.stdout).systemMessage;
    expect(told).toContain(`${proj.dir} is no longer a git repository during session g1`);
    expect(told).toContain("cannot be rewound from here");
  });

  it("points from the repository's root to a session an agent started in a subdirectory", async () => {
    // Codex names no project directory: a session started in packages/x is that directory's
    // (SPEC §8), and a person at the root must still find it.
    const codexEvent = SCRIPTS[1];
    const sub = repo.path("packages/x");
    send(codexEvent.begin(sub, "x2", 1, sub), sub, "codex");
    repo.write({ "packages/x/index.js": "x1\n" });
    send(codexEvent.stop(sub, "x2", sub), sub, "codex");
    const pointer = `(an agent started in a subdirectory keeps its sessions there: -C ${sub} has session x2)`;
    expect(repo.cli(["sessions"]).stdout.trim()).toBe(`no sessions of ${repo.dir} yet ${pointer}`);
    const rewind = repo.cli(["rewind", "--to", "turn-1"]);
    expect(rewind.status).toBe(1);
    expect(rewind.stderr.trim()).toBe(
      `ghostcommit: this workspace has no session with a turn yet ${pointer}`,
    );
    expect(repo.read("packages/x/index.js")).toBe("x1\n");
    // Named with --session, it is pointed to as well, instead of looking empty.
    const kept = `ghostcommit: session x2 has no turns in ${repo.dir}: its agent's hooks keep it in ${sub} (reach it with -C ${sub})`;
    for (const args of [
      ["log", "--session", "x2"],
      ["rewind", "--session", "x2", "--to", "turn-1"],
      ["redo", "--session", "x2"],
    ]) {
      const named = repo.cli(args);
      expect(named.status, args.join(" ")).toBe(1);
      expect(named.stderr.trim()).toBe(kept);
    }
    // Where it points, the rewind works.
    const there = sandbox.cli(repo.dir, ["-C", sub, "rewind", "--to", "turn-1", "--json"]);
    expect(there.status, there.stderr).toBe(0);
    expect(there.json.written).toEqual(["index.js"]);
    expect(repo.read("packages/x/index.js")).toBe("x0\n");
    // A session of the root itself is listed as ever, and the subdirectory's still named below it.
    send(claude(repo.dir, "c9", "UserPromptSubmit", { prompt: "p" }), repo.dir);
    const listed = repo.cli(["sessions"]).stdout.trim().split("\n");
    expect(listed).toEqual([
      expect.stringMatching(/^c9 {2}1 turn/),
      `an agent started in a subdirectory keeps its sessions there: -C ${sub} has session x2`,
    ]);
    // The subdirectory removed (a worktree removed, a package deleted): nothing points there now.
    rmSync(repo.path("packages"), { recursive: true });
    expect(repo.cli(["sessions"]).stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^c9 {2}1 turn/),
    ]);
  });

  it("points to such a session named by the start of its id, with its whole id", async () => {
    // Codex's session ids are UUIDs (`session_id`); a person types the start of one.
    const codexEvent = SCRIPTS[1];
    const sub = repo.path("packages/y");
    const id = "019a7f3e-5b6c-7d8e-9f00-112233445566";
    repo.write({ "packages/y/index.js": "y0\n" });
    send(codexEvent.begin(sub, id, 1, sub), sub, "codex");
    repo.write({ "packages/y/index.js": "y1\n" });
    send(codexEvent.stop(sub, id, sub), sub, "codex");
    const named = repo.cli(["log", "--session", "019a7f3e"]);
    expect([named.status, named.stderr.trim()]).toEqual([
      1,
      `ghostcommit: session ${id} has no turns in ${repo.dir}: its agent's hooks keep it in ${sub} (reach it with -C ${sub})`,
    ]);
    const there = sandbox.cli(repo.dir, [
      "-C",
      sub,
      "rewind",
      "--session",
      "019a7f3e",
      "--to",
      "turn-1",
      "--json",
    ]);
    expect([there.status, there.json.session, there.json.written]).toEqual([0, id, ["index.js"]]);
  });

  it("does not let one session revert another's unreported shell edit", async () => {
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    repo.write({ "notes.md": "by a shell of one of them\n" });
    // Both ran a shell command meanwhile; neither reports what it wrote.
    for (const s of ["A", "B"]) {
      const bash = { tool_name: "Bash", tool_input: { command: "./gen.sh" }, tool_response: {} };
      send(claude(repo.dir, s, "PostToolUse", bash), repo.dir);
    }
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    for (const s of ["A", "B"]) {
      const refused = repo.cli(["rewind", "--session", s, "--to", "1", "--json"]);
      expect(refused.status).toBe(3);
      expect(refused.json.conflicts).toEqual(["notes.md"]);
      expect(refused.json.uncertain).toEqual(["notes.md"]);
      // Nobody changed it since: the refusal says why it is in doubt, not that it was edited later.
      expect(repo.cli(["rewind", "--session", s, "--to", "1"]).stderr.trim()).toBe(
        `ghostcommit: rewind refused: 1 file may not be session ${s}'s work: no tool call reported its change, or another session's also edited it, while another session's turn ran or after an interrupt (notes.md); nothing was changed; \`ghostcommit rewind --session ${s} --to 1 -- PATH…\` rewinds only the paths it names, --force overwrites`,
      );
    }
    expect(repo.read("notes.md")).toBe("by a shell of one of them\n");
  });

  it("keeps a session at the root and one an agent started in a subdirectory from reverting each other's work", async () => {
    // Codex names no project directory: a session started in packages/x is that directory's
    // workspace, with its own store, while its files are the root session's files too.
    const codexEvent = SCRIPTS[1];
    const sub = repo.path("packages/x");
    send(codexEvent.begin(repo.dir, "root", 1, repo.dir), repo.dir, "codex");
    send(codexEvent.begin(sub, "sub", 1, sub), sub, "codex");
    // The subdirectory's agent patches index.js (a path relative to its cwd); a shell writes made.txt.
    send(codexEvent.pre(sub, "sub", "index.js", sub), sub, "codex");
    repo.write({ "packages/x/index.js": "x by sub\n" });
    send(codexEvent.post(sub, "sub", "index.js", sub), sub, "codex");
    repo.write({ "packages/x/made.txt": "by a shell of one of them\n" });
    send(codexEvent.stop(sub, "sub", sub), sub, "codex");
    send(codexEvent.stop(repo.dir, "root", repo.dir), repo.dir, "codex");
    // The sub session's patch is its own, not the root session's; the shell's file is in doubt in both.
    expect((await log("root"))[0]).toMatchObject({
      changed: ["packages/x/made.txt"],
      uncertain: ["packages/x/made.txt"],
    });
    const subLog = sandbox.cli(repo.dir, ["-C", sub, "log", "--session", "sub", "--json"]).json;
    expect(subLog[0]).toMatchObject({ changed: ["index.js", "made.txt"], uncertain: ["made.txt"] });
    const fromRoot = repo.cli(["rewind", "--session", "root", "--to", "turn-1", "--json"]);
    expect(fromRoot.status, fromRoot.stderr).toBe(3);
    expect(fromRoot.json.uncertain).toEqual(["packages/x/made.txt"]);
    const fromSub = sandbox.cli(repo.dir, [
      "-C",
      sub,
      "rewind",
      "--session",
      "sub",
      "--to",
      "turn-1",
      "--json",
    ]);
    expect(fromSub.status, fromSub.stderr).toBe(3);
    expect(fromSub.json.uncertain).toEqual(["made.txt"]);
    expect([repo.read("packages/x/index.js"), repo.read("packages/x/made.txt")]).toEqual([
      "x by sub\n",
      "by a shell of one of them\n",
    ]);
    // The root session's own rewind, limited to what is surely its own, leaves the patch alone.
    const forced = repo.cli(["rewind", "--session", "root", "--to", "turn-1", "--force", "--json"]);
    expect(forced.status, forced.stderr).toBe(0);
    expect([repo.read("packages/x/index.js"), repo.exists("packages/x/made.txt")]).toEqual([
      "x by sub\n",
      false,
    ]);
  });

  it("keeps a session's shell edit its own when the other session's turn beside it had already ended", async () => {
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a quick question" }), repo.dir);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    // Only then does B's shell command write two files (Claude Code reports Bash after it ran).
    repo.write({ "bb.txt": "bb\n", "notes.md": "by B's shell\n" });
    const bash = { tool_name: "Bash", tool_input: { command: "./make.sh" }, tool_use_id: "t1" };
    send(
      claude(repo.dir, "B", "PostToolUse", { ...bash, tool_response: { stdout: "", stderr: "" } }),
      repo.dir,
    );
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("B"))[0]).toMatchObject({ changed: ["bb.txt", "notes.md"] });
    expect((await log("B"))[0].uncertain ?? []).toEqual([]);
    const rewound = repo.cli(["rewind", "--session", "B", "--to", "1", "--json"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect([repo.exists("bb.txt"), repo.read("notes.md")]).toEqual([false, "n0\n"]);
  });

  it("still doubts a shell edit that the other session's ended turn already shows", async () => {
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    repo.write({ "bb.txt": "by a shell of one of them\n" });
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("B"))[0].uncertain).toEqual(["bb.txt"]);
    expect(repo.cli(["rewind", "--session", "B", "--to", "1"]).status).toBe(3);
    expect(repo.read("bb.txt")).toBe("by a shell of one of them\n");
  });

  it("keeps a session's own shell edit, made before another session's turn began, its own", async () => {
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    // A's shell command, reported after it ran (Claude Code's PostToolUse for Bash).
    const bash = { tool_name: "Bash", tool_input: { command: "./gen.sh" }, tool_use_id: "t1" };
    repo.write({ "notes.md": "by A's shell\n", "README.md": "by A's shell\n" });
    send(
      claude(repo.dir, "A", "PostToolUse", { ...bash, tool_response: { stdout: "", stderr: "" } }),
      repo.dir,
    );
    // Only then does B's turn begin; during it README.md changes again, reported by no one.
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    repo.write({ "README.md": "by A's shell, then someone\n" });
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("A"))[0].changed).toEqual(["README.md", "notes.md"]);
    expect((await log("A"))[0].uncertain).toEqual(["README.md"]);
    const rewound = repo.cli(["rewind", "--session", "A", "--to", "1", "--json", "--", "notes.md"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect(rewound.json.written).toEqual(["notes.md"]);
    expect(repo.read("notes.md")).toBe("n0\n");
    const refused = repo.cli(["rewind", "--session", "A", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["README.md"]);
  });

  /** Dates the session journals back, as if their agents had been silent for `minutes`. */
  const silentFor = (minutes: number) => {
    const workspaces = path.join(sandbox.home, "data", "workspaces");
    const when = new Date(Date.now() - minutes * 60_000);
    for (const workspace of readdirSync(workspaces)) {
      const sessions = path.join(workspaces, workspace, "sessions");
      for (const name of readdirSync(sessions)) utimesSync(path.join(sessions, name), when, when);
    }
  };

  it("counts a turn still open in one long shell command as overlapping a later session's turn", async () => {
    // A's agent sends its prompt, then runs a build that sends no event for minutes (Claude Code's
    // Bash tool allows up to 10); meanwhile B's whole turn runs, and A's build writes a file.
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "build it" }), repo.dir);
    silentFor(5);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    repo.write({ "built.txt": "made by A's long build\n" });
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("B"))[0].uncertain).toEqual(["built.txt"]);
    const refused = repo.cli(["rewind", "--session", "B", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["built.txt"]);
    expect(repo.read("built.txt")).toBe("made by A's long build\n");
  });

  it("does not take a turn abandoned long ago for one running beside every later turn", async () => {
    // A was interrupted (Esc) an hour ago and never ended; B's shell edit now is B's alone.
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    silentFor(60);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    repo.write({ "notes.md": "by B's shell\n" });
    const bash = { tool_name: "Bash", tool_input: { command: "./notes.sh" }, tool_response: {} };
    send(claude(repo.dir, "B", "PostToolUse", bash), repo.dir);
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("B"))[0].uncertain ?? []).toEqual([]);
    const rewound = repo.cli(["rewind", "--session", "B", "--to", "1", "--json"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect(repo.read("notes.md")).toBe("n0\n");
  });

  it("takes a turn left open by Esc as over once /clear ends its conversation (SessionEnd)", async () => {
    // The user presses Esc in OLD's turn (no Stop), then /clear: Claude Code ends OLD and starts
    // NEW at once. NEW's shell edit is NEW's alone: no other turn is running.
    send(claude(repo.dir, "OLD", "UserPromptSubmit", { prompt: "first try" }), repo.dir);
    const bash = (command: string, id: string) => ({
      tool_name: "Bash",
      tool_input: { command },
      tool_use_id: id,
      tool_response: { stdout: "", stderr: "" },
    });
    send(claude(repo.dir, "OLD", "PostToolUse", bash("ls", "t1")), repo.dir);
    send(claude(repo.dir, "OLD", "SessionEnd", { reason: "clear" }), repo.dir);
    send(claude(repo.dir, "NEW", "SessionStart", { source: "clear" }), repo.dir);
    send(claude(repo.dir, "NEW", "UserPromptSubmit", { prompt: "second try" }), repo.dir);
    repo.write({ "gen.txt": "gen\n" });
    send(claude(repo.dir, "NEW", "PostToolUse", bash("echo gen > gen.txt", "t2")), repo.dir);
    send(claude(repo.dir, "NEW", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("NEW"))[0]).toMatchObject({ changed: ["gen.txt"] });
    expect((await log("NEW"))[0].uncertain ?? []).toEqual([]);
    const rewound = repo.cli(["rewind", "--session", "NEW", "--to", "1", "--json"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect(repo.exists("gen.txt")).toBe(false);
    // OLD's turn took no snapshot at its end: it stays as an interrupt leaves it, closed by the
    // next prompt if the conversation is resumed.
    expect((await log("OLD"))[0]).toMatchObject({ turn: "1", state: "open", after: null });
    send(claude(repo.dir, "OLD", "SessionStart", { source: "resume" }), repo.dir);
    send(claude(repo.dir, "OLD", "UserPromptSubmit", { prompt: "again" }), repo.dir);
    expect((await log("OLD")).map((t) => [t.turn, t.state])).toEqual([
      ["1", "done"],
      ["2", "open"],
    ]);
  });

  it("registers SessionEnd on install, and doctor tells an install from before it", () => {
    const file = repo.ok("install", "claude-code", "--project").file;
    const settings = JSON.parse(readFileSync(file, "utf8"));
    expect(settings.hooks.SessionEnd[0].hooks[0].command).toBe(settings.hooks.Stop[0].hooks[0].command);
    delete settings.hooks.SessionEnd;
    writeFileSync(file, JSON.stringify(settings, null, 2));
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([
      expect.objectContaining({
        code: "hook-install-outdated",
        message: `the Claude Code hooks in ${file} lack SessionEnd; run \`ghostcommit install claude-code --project\` again`,
      }),
    ]);
    expect(repo.ok("install", "claude-code", "--project")).toMatchObject({
      changed: true,
      events: ["SessionEnd"],
    });
  });

  it("doctor tells an install whose tool matchers are an earlier release's (no MCP tools), and install again mends it", async () => {
    const file = repo.ok("install", "claude-code", "--project").file;
    const settings = JSON.parse(readFileSync(file, "utf8"));
    const now = settings.hooks.PostToolUse[0].matcher;
    expect(now).toBe("Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*");
    // As the release before MCP tools were marked wrote them.
    const before = "Write|Edit|MultiEdit|NotebookEdit|Bash";
    settings.hooks.PostToolUse[0].matcher = before;
    settings.hooks.PostToolUseFailure[0].matcher = before;
    writeFileSync(file, JSON.stringify(settings, null, 2));
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([
      expect.objectContaining({
        code: "hook-install-outdated",
        message: `the Claude Code hooks in ${file} leave out tools this release hooks (PostToolUse runs for ${before}, not ${now}; PostToolUseFailure runs for ${before}, not ${now}), so their calls go unrecorded; run \`ghostcommit install claude-code --project\` again`,
      }),
    ]);
    // Matchers that run for every tool this release hooks are no older release's: the same tools
    // in another order, every tool ("*", or empty, as Claude Code reads them).
    for (const [post, failure] of [
      ["Bash|Write|Edit|MultiEdit|NotebookEdit|mcp__.*", "*"],
      ["Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*|Read", ""],
    ]) {
      settings.hooks.PostToolUse[0].matcher = post;
      settings.hooks.PostToolUseFailure[0].matcher = failure;
      writeFileSync(file, JSON.stringify(settings, null, 2));
      expect(repo.cli(["doctor", "--json"]).json.problems, post).toEqual([]);
    }
    settings.hooks.PostToolUse[0].matcher = before;
    writeFileSync(file, JSON.stringify(settings, null, 2));
    expect(repo.ok("install", "claude-code", "--project").changed).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8")).hooks.PostToolUse.map((g: any) => g.matcher)).toEqual([
      now,
    ]);
    expect((await doctorIn(repo)).ok).toBe(true);
  });

  it("does not let one session revert another's shell edit to a file it had touched", () => {
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    // A writes shared.md with its Write tool (reported before and after)...
    const file = repo.path("shared.md");
    const write = { tool_name: "Write", tool_input: { file_path: file, content: "A\n" }, tool_use_id: "t1" };
    send(claude(repo.dir, "A", "PreToolUse", write), repo.dir);
    repo.write({ "shared.md": "A\n" });
    const done = { ...write, tool_response: { filePath: file, success: true } };
    send(claude(repo.dir, "A", "PostToolUse", done), repo.dir);
    // ...then B's shell command appends to it: no tool call of A's can explain that line.
    const bash = { tool_name: "Bash", tool_input: { command: "echo B >> shared.md" }, tool_use_id: "t2" };
    send(claude(repo.dir, "B", "PreToolUse", bash), repo.dir);
    repo.write({ "shared.md": "A\nB\n" });
    send(
      claude(repo.dir, "B", "PostToolUse", { ...bash, tool_response: { stdout: "", stderr: "" } }),
      repo.dir,
    );
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    const refused = repo.cli(["rewind", "--session", "A", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.uncertain).toEqual(["shared.md"]);
    expect(repo.read("shared.md")).toBe("A\nB\n");
    // The person decides: --force rewinds it, and says what it overwrites (first as a plan).
    const plan = repo.cli(["rewind", "--session", "A", "--to", "1", "--force", "--dry-run"]);
    expect(plan.stdout).toContain("would overwrite (--force) 1 conflict: shared.md");
    expect(repo.read("shared.md")).toBe("A\nB\n");
    const forced = repo.cli(["rewind", "--session", "A", "--to", "1", "--force", "--json"]);
    expect(forced.json.deleted).toEqual(["shared.md"]);
    expect(forced.json.overridden).toEqual(["shared.md"]);
  });

  it("rewinds a session's edit of a file another session wrote beside it back to the other's version", () => {
    // B's turn begins; A's turn, beside it, writes notes2.md and appends to notes.md with its tools and
    // ends; then B's Edit tool changes both. Rewinding B must leave A's work (SPEC §8).
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    const tool = (name: string, file: string, id: string) => ({
      tool_name: name,
      tool_input: { file_path: repo.path(file) },
      tool_use_id: id,
    });
    const edit = (session: string, call: ReturnType<typeof tool>, files: Record<string, string>) => {
      send(claude(repo.dir, session, "PreToolUse", call), repo.dir);
      repo.write(files);
      send(claude(repo.dir, session, "PostToolUse", { ...call, tool_response: { success: true } }), repo.dir);
    };
    edit("A", tool("Write", "notes2.md", "a1"), { "notes2.md": "A's notes\n" });
    edit("A", tool("Edit", "notes.md", "a2"), { "notes.md": "n0\nA's line\n" });
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    edit("B", tool("Edit", "notes2.md", "b1"), { "notes2.md": "A's notes\nB's line\n" });
    edit("B", tool("Edit", "notes.md", "b2"), { "notes.md": "n0\nA's line\nB's line\n" });
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);

    const rewound = repo.cli(["rewind", "--session", "B", "--to", "1", "--json"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect([rewound.json.written, rewound.json.deleted]).toEqual([["notes.md", "notes2.md"], []]);
    expect([repo.read("notes2.md"), repo.read("notes.md")]).toEqual(["A's notes\n", "n0\nA's line\n"]);
    // A's own rewind then takes back A's work, and B's redo is refused over it, not applied blindly.
    const undone = repo.cli(["rewind", "--session", "A", "--to", "1", "--json"]);
    expect(undone.status, undone.stderr).toBe(0);
    expect([repo.exists("notes2.md"), repo.read("notes.md")]).toEqual([false, "n0\n"]);
    expect(repo.cli(["redo", "--session", "B"]).status).toBe(3);
  });

  it("snapshots a Claude session working in a linked worktree there, not in the project directory that names it", () => {
    // INTEGRATIONS: CLAUDE_PROJECT_DIR is where the session started; `cwd` follows worktrees
    // (`claude --worktree` works in .claude/worktrees/<name>).
    repo.git("worktree", "add", "-q", ".claude/worktrees/feat", "-b", "feat");
    const tree = repo.path(".claude/worktrees/feat");
    const env = { CLAUDE_PROJECT_DIR: repo.dir };
    const send = (event: unknown, cwd = tree) =>
      expectQuiet(shellHook(sandbox, installedCommand("claude-code"), event, cwd, env));
    send(claude(tree, "w1", "UserPromptSubmit", { prompt: "work in the worktree" }));
    send(
      claude(tree, "w1", "PreToolUse", { tool_name: "Edit", tool_input: { file_path: `${tree}/notes.md` } }),
    );
    writeFileSync(path.join(tree, "notes.md"), "edited\n");
    writeFileSync(path.join(tree, "made-by-shell.txt"), "new\n");
    send(
      claude(tree, "w1", "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command: "echo new > made-by-shell.txt" },
      }),
    );
    send(claude(tree, "w1", "Stop", { stop_hook_active: false }));

    expect(repo.cli(["sessions"]).stdout).toContain(`-C ${realpathSync(tree)} has session w1`);
    const [turn] = sandbox.ok(tree, "log", "--session", "w1");
    expect([turn.state, turn.changed]).toEqual(["done", ["made-by-shell.txt", "notes.md"]]);
    const rewound = sandbox.ok(tree, "rewind", "--session", "w1", "--to", "1");
    expect([rewound.written, rewound.deleted]).toEqual([["notes.md"], ["made-by-shell.txt"]]);
    expect(sandbox.git(tree, "status", "--porcelain")).toBe("");

    // A session fixed at the root that later works in the worktree is told, not silently skipped.
    send(claude(repo.dir, "r1", "UserPromptSubmit", { prompt: "at the root" }), repo.dir);
    send(claude(repo.dir, "r1", "Stop", { stop_hook_active: false }), repo.dir);
    const told = shellHook(
      sandbox,
      installedCommand("claude-code"),
      claude(tree, "r1", "UserPromptSubmit", { prompt: "in the worktree" }),
      tree,
      env,
    );
    expect(JSON.parse(told.stdout).systemMessage).toBe(
      `ghostcommit: this session's workspace is ${repo.dir}, fixed by its first event; its work in ${realpathSync(tree)} (another git work tree) is not snapshotted: start a new session there for undo`,
    );
  });

  it("does not let one session revert another's later edit of a file both edited, after its own shell ran", async () => {
    // A's Edit tool appends to notes.md, then B's does; then A's shell runs a command that changes
    // nothing, so A's progress mark holds B's line too. Rewinding A must not take B's line (SPEC §8).
    send(claude(repo.dir, "A", "UserPromptSubmit", { prompt: "a" }), repo.dir);
    send(claude(repo.dir, "B", "UserPromptSubmit", { prompt: "b" }), repo.dir);
    const call = { tool_name: "Edit", tool_input: { file_path: repo.path("notes.md") } };
    const edit = (session: string, id: string, content: string) => {
      send(claude(repo.dir, session, "PreToolUse", { ...call, tool_use_id: id }), repo.dir);
      repo.write({ "notes.md": content });
      const done = { ...call, tool_use_id: id, tool_response: { success: true } };
      send(claude(repo.dir, session, "PostToolUse", done), repo.dir);
    };
    edit("A", "a1", "n0\nA's line\n");
    edit("B", "b1", "n0\nA's line\nB's line\n");
    const bash = { tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "a2" };
    send(
      claude(repo.dir, "A", "PostToolUse", { ...bash, tool_response: { stdout: "", stderr: "" } }),
      repo.dir,
    );
    send(claude(repo.dir, "A", "Stop", { stop_hook_active: false }), repo.dir);
    send(claude(repo.dir, "B", "Stop", { stop_hook_active: false }), repo.dir);
    expect((await log("A"))[0]).toMatchObject({ changed: ["notes.md"], uncertain: ["notes.md"] });
    const refused = repo.cli(["rewind", "--session", "A", "--to", "1", "--json"]);
    expect(refused.status, refused.stderr).toBe(3);
    expect([refused.json.conflicts, refused.json.uncertain]).toEqual([["notes.md"], ["notes.md"]]);
    expect(repo.cli(["rewind", "--session", "A", "--to", "1"]).stderr.trim()).toBe(
      "ghostcommit: rewind refused: 1 file may not be session A's work: no tool call reported its change, or another session's also edited it, while another session's turn ran or after an interrupt (notes.md); nothing was changed; `ghostcommit rewind --session A --to 1 -- PATH…` rewinds only the paths it names, --force overwrites",
    );
    expect(repo.read("notes.md")).toBe("n0\nA's line\nB's line\n");
    // B's turn took the file from A's version: rewinding B keeps A's line.
    const rewound = repo.cli(["rewind", "--session", "B", "--to", "1", "--json"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect(repo.read("notes.md")).toBe("n0\nA's line\n");
  });

  it("creates no store for a Cursor event that names no workspace (user hooks run in ~/.cursor)", () => {
    const dotCursor = sandbox.dir(".cursor");
    const send = (event: unknown, reply: string) =>
      expectQuiet(shellHook(sandbox, installedCommand("cursor"), event, dotCursor), reply);
    const prompt = cursor(repo.dir, "c1", "beforeSubmitPrompt", { prompt: "p" });
    const { workspace_roots: _, ...noRoots } = prompt;
    for (const roots of [[], [""], "/x", null])
      send({ ...prompt, workspace_roots: roots }, '{"continue":true}');
    send(noRoots, '{"continue":true}');
    send({ ...noRoots, hook_event_name: "stop", status: "completed" }, "{}");
    send("not json", '{"continue":true}');
    expect(storeCount(sandbox)).toBe(0);
    const lines = readLines(path.join(sandbox.home, "data", "hooks.log"));
    expect(lines).toHaveLength(7);
    expect(lines[0]).toMatchObject({ level: "warn", agent: "cursor", event: "beforeSubmitPrompt" });
    expect(lines[0].message).toContain("names no workspace");
    // The other agents' events all carry a `cwd`: from a project, one still has its store.
    expectQuiet(
      shellHook(sandbox, installedCommand("codex"), codex(repo.dir, "x1", "UserPromptSubmit"), repo.dir),
    );
    expect(storeCount(sandbox)).toBe(1);
  });

  it("creates no store for events from $HOME, and doctor elsewhere reports only what concerns it", () => {
    const home = sandbox.home;
    // Claude Code shows the user why, once a session (Cursor's answers have no such field).
    const told = `ghostcommit: no snapshots of this session's work: not snapshotting ${home} (home or root directory); start the agent in a project or pass -C`;
    const event = claude(home, "h1", "UserPromptSubmit", { prompt: "p" });
    expectQuiet(
      shellHook(sandbox, installedCommand("claude-code"), event, home),
      JSON.stringify({ systemMessage: told }),
    );
    expectQuiet(shellHook(sandbox, installedCommand("cursor"), "not json", home), '{"continue":true}');
    send(cursor(path.join(home, "gone"), "c9", "beforeSubmitPrompt", { prompt: "p" }), home, "cursor");
    expect(storeCount(sandbox)).toBe(0);
    const global = path.join(sandbox.home, "data", "hooks.log");
    const lines = readLines(global);
    expect(lines.map((l) => l.level)).toEqual(["warn", "error", "error"]);
    // Fresh failures are shown everywhere; an hour later only where they concern the workspace.
    const fresh = repo.cli(["doctor"]);
    expect(fresh.status).toBe(1);
    expect(fresh.stdout).toContain(
      "2 hook failures logged outside any workspace (this workspace's of the last 7 days, others' of the last hour)",
    );
    const old = new Date(Date.now() - 2 * 3600_000).toISOString();
    writeLines(
      global,
      lines.map((l) => ({ ...l, t: old })),
    );
    expect(repo.ok("doctor").ok).toBe(true);
    writeLines(global, [{ t: old, level: "error", agent: "codex", dir: repo.path("src"), message: "boom" }]);
    const doctor = repo.cli(["doctor"]);
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toContain(`boom. Details in ${global}`);
  });
});

function readLines(file: string): any[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

function writeLines(file: string, lines: unknown[]): void {
  writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}
