import { spawn } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { logIn } from "../helpers/in-process.js";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { SCRIPTS } from "./agent-events.js";
import { agentHookEnv, expectQuiet, hookLogs, installedCommand, shellHook } from "./hook-helpers.js";

/**
 * A prompt's hook that the agent kills at its timeout (Claude Code's `timeout`, 30 s as installed,
 * Codex's and Gemini CLI's the same) while its snapshot runs: a huge repository, a slow disk. The
 * agent goes on with the prompt. Its tool calls are that prompt's work, not the previous turn's,
 * although no turn began for it: before, they reopened the previous turn (as after a stop another
 * hook blocked) and a rewind of that turn took this prompt's work with it, unasked.
 */
let sandbox: Sandbox;
let repo: Repo;
/** A `git` ahead of the real one whose `status` hangs once armed: the snapshot that overruns. */
let slowGitDir: string;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", {
    ".gitattributes": "* text=auto eol=lf\n",
    "a.txt": "a0\n",
    "b.txt": "b0\n",
    "sub/c.txt": "c0\n",
  });
  slowGitDir = sandbox.dir("slow-git");
  const git = path.join(slowGitDir, "git");
  writeFileSync(
    git,
    `#!/bin/sh
case " $* " in *" status "*) if [ -e "${slowGitDir}/armed" ]; then touch "${slowGitDir}/hanging"; sleep 60; fi;; esac
exec /usr/bin/git "$@"
`,
  );
  chmodSync(git, 0o755);
});
afterEach(() => sandbox.cleanup());

/** How many prompts the session journals in the sandbox record (each turn's beginning writes one). */
function promptsRecorded(): number {
  let count = 0;
  const root = path.join(sandbox.home, "data", "workspaces");
  for (const key of readdirSync(root)) {
    const dir = path.join(root, key, "sessions");
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir))
      if (name.endsWith(".jsonl"))
        count += readFileSync(path.join(dir, name), "utf8").split('"e":"prompt"').length - 1;
  }
  return count;
}

describe.each(SCRIPTS)("$agent: a prompt whose hook the agent killed", (script) => {
  const root = () => repo.dir;
  // Claude Code's events come from where the agent ran `cd` (its project named apart); the others' from the root.
  const cwd = () => (script.agent === "claude-code" ? repo.path("sub") : root());
  const send = (event: unknown, from = cwd()) => {
    if (event === null) return;
    const reply = script.agent === "gemini" ? "{}" : script.agent === "cursor" ? /continue|{}/ : "";
    const result = shellHook(sandbox, installedCommand(script.agent), event, from, pathEnv());
    if (typeof reply === "string") expectQuiet(result, reply);
    else expect(result.status).toBe(0);
  };
  const pathEnv = () => ({
    PATH: `${slowGitDir}:/usr/bin:/bin`,
    ...(script.agent === "claude-code" ? { CLAUDE_PROJECT_DIR: root() } : {}),
  });
  const edit = (s: string, file: string, content: string) => {
    send(script.pre(cwd(), s, repo.path(file), root()));
    repo.write({ [file]: content });
    send(script.post(cwd(), s, repo.path(file), root()));
  };

  /** `rewind --to <turn 1> --json` of session `s` from a terminal, with `more` options. */
  const rewindTo1 = (s: string, ...more: string[]) =>
    sandbox.cli(root(), ["rewind", "--session", s, "--to", script.turnId(1), ...more, "--json"]);

  /** A prompt after killed ones: its hook tells the person they have no undo, so it is not quiet. */
  const toldPrompt = (s: string, n: number) =>
    shellHook(sandbox, installedCommand(script.agent), script.begin(cwd(), s, n, root()), cwd(), pathEnv());
  /** Starts the prompt's hook, waits until its snapshot hangs in status, and kills it as the agent does. */
  const killedPrompt = async (s: string, n: number) => {
    writeFileSync(path.join(slowGitDir, "armed"), "");
    const vars = agentHookEnv(sandbox, pathEnv());
    const child = spawn(
      "/usr/bin/env",
      [
        "-i",
        ...Object.entries(vars).map(([k, v]) => `${k}=${v}`),
        "/bin/sh",
        "-c",
        installedCommand(script.agent),
      ],
      { cwd: cwd(), detached: true, stdio: ["pipe", "ignore", "ignore"] },
    );
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.stdin.end(JSON.stringify(script.begin(cwd(), s, n, root())));
    const hanging = path.join(slowGitDir, "hanging");
    for (let i = 0; i < 300 && !existsSync(hanging); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(hanging)).toBe(true);
    // Status may start ahead, while the hook's code still loads: the agent's kill comes long after.
    for (let i = 0; i < 100 && promptsRecorded() < n; i++) await new Promise((r) => setTimeout(r, 50));
    process.kill(-child.pid!, "SIGKILL");
    await exited;
    rmSync(path.join(slowGitDir, "armed"));
  };

  it("leaves the previous turn its own work: the killed prompt's edits are no turn's, rewinding that turn refuses to take them, and the next prompt says so", async () => {
    const s = `${script.agent}-killed`;
    send(script.begin(cwd(), s, 1, root()));
    edit(s, "a.txt", "turn 1\n");
    send(script.stop(cwd(), s, root()));

    await killedPrompt(s, 2);
    edit(s, "a.txt", "killed prompt\n");
    edit(s, "b.txt", "killed prompt\n");
    send(script.stop(cwd(), s, root()));

    const turns = await logIn(repo, s);
    expect(turns.map((t) => [t.turn, t.state, t.changed])).toEqual([[script.turnId(1), "done", ["a.txt"]]]);
    // What the agent did is said where doctor shows it, with the reason.
    const notUndoable = hookLogs(sandbox).filter((l) => String(l.message).startsWith("not undoable"));
    expect(notUndoable.length).toBeGreaterThan(0);
    expect(notUndoable[0].message).toContain("the snapshot before its prompt never finished");

    // Rewinding turn 1 would undo the killed prompt's edit of a.txt too: refused, files as they are.
    const refused = sandbox.cli(root(), ["rewind", "--session", s, "--to", script.turnId(1), "--json"]);
    expect([refused.status, refused.json.error.code, refused.json.conflicts]).toEqual([
      3,
      "conflict",
      ["a.txt"],
    ]);
    expect(repo.read("a.txt")).toBe("killed prompt\n");
    expect(repo.read("b.txt")).toBe("killed prompt\n");

    // The next prompt begins a turn as usual, and the person is told the last one has no undo.
    const next = toldPrompt(s, 3);
    expect(next.status).toBe(0);
    const told = hookLogs(sandbox).filter((l) =>
      String(l.message).startsWith("the previous prompt has no undo"),
    );
    expect(told.map((l) => l.level)).toEqual(["error"]);
    if (script.agent === "claude-code") expect(next.stdout).toContain("the previous prompt has no undo");
    expect((await logIn(repo, s)).map((t) => t.state)).toEqual(["done", "open"]);
  });

  it("ends a turn an interrupt left open at its last tool call: the killed prompt's work after it is not that turn's", async () => {
    const s = `${script.agent}-interrupted`;
    send(script.begin(cwd(), s, 1, root()));
    edit(s, "a.txt", "turn 1\n");
    // Interrupted: no stop. The next prompt's hook is killed in its snapshot.
    await killedPrompt(s, 2);
    // The agent goes on with that prompt: a rewind of the session waits for it.
    const rewind = ["rewind", "--session", s, "--to", script.turnId(1), "--dry-run", "--json"];
    expect(sandbox.cli(root(), rewind).json.error.code).toBe("open-turn");
    edit(s, "a.txt", "killed prompt\n");
    edit(s, "b.txt", "killed prompt\n");
    send(script.stop(cwd(), s, root()));
    // Its one stop ended both: the interrupted turn (at its mark) and the prompt, which runs no more.
    expect(sandbox.cli(root(), rewind).json.error.code).toBe("conflict");
    // (It tells the person the killed prompt has no undo: not a quiet hook.)
    const next = toldPrompt(s, 3);
    expect(next.status).toBe(0);
    edit(s, "sub/c.txt", "turn 3\n");
    send(script.stop(cwd(), s, root()));

    const turns = await logIn(repo, s);
    expect(turns.map((t) => [t.state, t.changed, t.uncertain])).toEqual([
      ["done", ["a.txt"], undefined],
      ["done", ["sub/c.txt"], undefined],
    ]);
    // Turn 1's a.txt was changed since by the killed prompt: refused, and forced it leaves b.txt.
    const refused = sandbox.cli(root(), ["rewind", "--session", s, "--to", script.turnId(1), "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, ["a.txt"]]);
    const forced = rewindTo1(s, "--force");
    expect([forced.status, forced.json.written, forced.json.deleted]).toEqual([
      0,
      ["a.txt", "sub/c.txt"],
      [],
    ]);
    expect([repo.read("a.txt"), repo.read("b.txt"), repo.read("sub/c.txt")]).toEqual([
      "a0\n",
      "killed prompt\n",
      "c0\n",
    ]);
  });

  it("closes the interrupted turn at its last tool call in a rewind forced while the killed prompt runs: that prompt's work stays", async () => {
    const s = `${script.agent}-forced`;
    send(script.begin(cwd(), s, 1, root()));
    edit(s, "a.txt", "turn 1\n");
    await killedPrompt(s, 2);
    edit(s, "b.txt", "killed prompt\n");
    repo.write({ "made.txt": "by the killed prompt's shell\n" });
    send(script.shell(cwd(), s, "echo > made.txt", root()));
    // The person forces the rewind of the interrupted turn while the agent works on the prompt.
    const forced = rewindTo1(s, "--force");
    expect([forced.status, forced.json.written, forced.json.deleted]).toEqual([0, ["a.txt"], []]);
    expect([repo.read("a.txt"), repo.read("b.txt"), repo.read("made.txt")]).toEqual([
      "a0\n",
      "killed prompt\n",
      "by the killed prompt's shell\n",
    ]);
    const [turn] = await logIn(repo, s);
    expect([turn.state, turn.changed, turn.uncertain]).toEqual(["rewound", ["a.txt"], undefined]);
  });

  it("refuses a redo from a terminal while the killed prompt runs, as a rewind is, and does it once the prompt stopped", async () => {
    const s = `${script.agent}-redo`;
    send(script.begin(cwd(), s, 1, root()));
    edit(s, "a.txt", "turn 1\n");
    send(script.stop(cwd(), s, root()));
    expect(sandbox.cli(root(), ["rewind", "--session", s, "--to", script.turnId(1), "--json"]).status).toBe(
      0,
    );
    expect(repo.read("a.txt")).toBe("a0\n");
    await killedPrompt(s, 2);
    edit(s, "b.txt", "killed prompt\n");
    const running = sandbox.cli(root(), ["redo", "--session", s, "--json"]);
    expect([running.status, running.json.error.code]).toEqual([3, "open-turn"]);
    expect(running.json.error.message).toContain("working on a prompt whose turn never began");
    expect([repo.read("a.txt"), repo.read("b.txt")]).toEqual(["a0\n", "killed prompt\n"]);
    send(script.stop(cwd(), s, root()));
    const redone = sandbox.cli(root(), ["redo", "--session", s, "--json"]);
    expect([redone.status, redone.json.written]).toEqual([0, ["a.txt"]]);
    expect([repo.read("a.txt"), repo.read("b.txt")]).toEqual(["turn 1\n", "killed prompt\n"]);
  });

  it("counts the killed prompt's edits as its agent's in another session's turn beside it, and refuses a rewind while it runs", async () => {
    const [s1, s2] = [`${script.agent}-one`, `${script.agent}-two`];
    send(script.begin(cwd(), s1, 1, root()));
    edit(s1, "a.txt", "one 1\n");
    send(script.stop(cwd(), s1, root()));
    await killedPrompt(s1, 2);
    // A second conversation in the same folder works meanwhile.
    send(script.begin(cwd(), s2, 1, root()));
    edit(s2, "sub/c.txt", "two\n");
    edit(s1, "b.txt", "one, killed prompt\n");
    repo.write({ "made.txt": "by the killed prompt's shell\n" });
    send(script.shell(cwd(), s1, "echo > made.txt", root()));
    send(script.shell(cwd(), s2, "ls", root()));
    // While the killed prompt runs, a rewind of its session is refused as for an open turn.
    const running = sandbox.cli(root(), ["rewind", "--session", s1, "--to", script.turnId(1), "--json"]);
    expect([running.status, running.json.error.code]).toEqual([3, "open-turn"]);
    expect(running.json.error.message).toContain("working on a prompt whose turn never began");
    send(script.stop(cwd(), s2, root()));
    send(script.stop(cwd(), s1, root()));

    // b.txt its tool named is the killed prompt's alone; made.txt no tool named is in doubt (and
    // so is a file Cursor reports only after the edit, once another session ran beside it).
    const doubts = script.pre(cwd(), s2, "x", root()) === null ? ["made.txt", "sub/c.txt"] : ["made.txt"];
    const [turn] = await logIn(repo, s2);
    expect([turn.changed, turn.uncertain]).toEqual([["made.txt", "sub/c.txt"], doubts]);
    const refused = sandbox.cli(root(), ["rewind", "--session", s2, "--to", script.turnId(1), "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, doubts]);
    const force = doubts.includes("sub/c.txt") ? ["--force"] : [];
    const own = sandbox.cli(root(), [
      "rewind",
      "--session",
      s2,
      "--to",
      script.turnId(1),
      ...force,
      "--json",
      "--",
      "sub/c.txt",
    ]);
    expect([own.status, own.json.written]).toEqual([0, ["sub/c.txt"]]);
    expect([repo.read("b.txt"), repo.read("made.txt"), repo.read("sub/c.txt")]).toEqual([
      "one, killed prompt\n",
      "by the killed prompt's shell\n",
      "c0\n",
    ]);
    // Its stop came: the killed prompt runs no more, and its session's rewind goes ahead.
    const after = sandbox.cli(root(), ["rewind", "--session", s1, "--to", script.turnId(1), "--json"]);
    expect(after.json?.error?.code).not.toBe("open-turn");
  });

  it("says how many prompts in a row had their hook killed", async () => {
    const s = `${script.agent}-twice`;
    send(script.begin(cwd(), s, 1, root()));
    send(script.stop(cwd(), s, root()));
    await killedPrompt(s, 2);
    edit(s, "a.txt", "second prompt\n");
    send(script.stop(cwd(), s, root()));
    await killedPrompt(s, 3);
    edit(s, "b.txt", "third prompt\n");
    send(script.stop(cwd(), s, root()));
    const next = toldPrompt(s, 4);
    expect(next.status).toBe(0);
    const told = hookLogs(sandbox).filter((l) => String(l.message).includes("no undo"));
    expect(told.map((l) => l.message.slice(0, 46))).toEqual([
      "the previous 2 prompts have no undo: the snaps",
    ]);
    // log shows where they were: before the turn that began next.
    expect((await logIn(repo, s)).map((t) => t.unbegunBefore)).toEqual([undefined, 2]);
    const human = sandbox.cli(root(), ["log", "--session", s]).stdout.split("\n");
    const at = human.findIndex((line) => line.includes("2 prompts here had no undo"));
    expect(human[at]).toBe("  (2 prompts here had no undo: the snapshot before each never finished)");
    expect(human[at + 1]).toMatch(/^ {2}\S+\s+open/);
  });

  it("leaves another session's turn its own edit of a file the killed prompt edited and finished with before", async () => {
    const [s1, s2] = [`${script.agent}-first`, `${script.agent}-second`];
    send(script.begin(cwd(), s1, 1, root()));
    send(script.stop(cwd(), s1, root()));
    await killedPrompt(s1, 2);
    edit(s1, "a.txt", "the killed prompt's\n");
    send(script.begin(cwd(), s2, 1, root()));
    edit(s2, "a.txt", "the second session's\n");
    send(script.stop(cwd(), s2, root()));
    const [turn] = await logIn(repo, s2);
    // Cursor reports an edit only after it: what the file held just before is then in doubt.
    const reportedAfter = script.pre(cwd(), s2, "x", root()) === null;
    expect([turn.changed, turn.uncertain]).toEqual([["a.txt"], reportedAfter ? ["a.txt"] : undefined]);
    if (reportedAfter) return;
    const rewound = sandbox.ok(root(), "rewind", "--session", s2, "--to", script.turnId(1));
    expect([rewound.written, repo.read("a.txt")]).toEqual([["a.txt"], "the killed prompt's\n"]);
  });
});
