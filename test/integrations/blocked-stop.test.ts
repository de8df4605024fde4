import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { logIn } from "../helpers/in-process.js";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { SCRIPTS } from "./agent-events.js";
import { expectQuiet, installedCommand, shellHook } from "./hook-helpers.js";

/**
 * A stop another hook blocked (a test-running Stop hook, say): Claude Code, Codex and Gemini CLI
 * before 0.35 go on working with no new prompt, then stop again with `stop_hook_active: true`
 * (Claude Code's hooks reference: "stop_hook_active: true when Claude Code is already continuing
 * as a result of a stop hook"). Their tool calls in between are the turn's work: a file they
 * report has its state before them captured as in any turn, even an ignored one.
 */
let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { ".gitignore": ".env\n", "a.txt": "a\n", "b.txt": "b\n" });
  repo.write({ ".env": "KEY=original\n" });
});
afterEach(() => sandbox.cleanup());

const blocking = SCRIPTS.filter((script) => script.stop("/", "s", "/", true) !== null);

describe.each(blocking)("$agent: the work after a blocked stop", (script) => {
  const send = (event: unknown, cwd = repo.dir) => {
    const reply = script.agent === "gemini" ? "{}" : "";
    expectQuiet(shellHook(sandbox, installedCommand(script.agent), event, cwd), reply);
  };
  /** An edit tool's call as the agent reports it: before (where it does), the edit, after. */
  const edit = (s: string, file: string, content: string) => {
    const pre = script.pre(repo.dir, s, repo.path(file), repo.dir);
    if (pre) send(pre);
    repo.write({ [file]: content });
    send(script.post(repo.dir, s, repo.path(file), repo.dir));
  };
  const rewind = (s: string, to: string) =>
    sandbox.cli(repo.dir, ["rewind", "--session", s, "--to", to, "--json"]);

  it("is the turn's: a rewind puts back the ignored file it edited as it was, and redo brings the edit", async () => {
    const s = `${script.agent}-blocked`;
    send(script.begin(repo.dir, s, 1, repo.dir));
    edit(s, "a.txt", "A\n");
    send(script.stop(repo.dir, s, repo.dir));
    edit(s, ".env", "KEY=changed\n");
    send(script.stop(repo.dir, s, repo.dir, true));

    const [turn] = await logIn(repo, s);
    expect(turn).toMatchObject({ turn: script.turnId(1), state: "done", changed: [".env", "a.txt"] });
    const rewound = rewind(s, script.turnId(1));
    expect(rewound.status, rewound.stderr).toBe(0);
    // Before, the edit's before-state was never captured: the rewind deleted the user's .env.
    expect(rewound.json.deleted).toEqual([]);
    expect([repo.read(".env"), repo.read("a.txt")]).toEqual(["KEY=original\n", "a\n"]);
    expect(sandbox.cli(repo.dir, ["redo", "--session", s]).status).toBe(0);
    expect([repo.read(".env"), repo.read("a.txt")]).toEqual(["KEY=changed\n", "A\n"]);
  });

  // Claude Code and Gemini CLI mark after every tool that can change files (see MARKS_EVERY_TOOL).
  it.runIf(script.agent !== "codex")(
    "takes a person's change after the blocked stop, with no tool call since or after the last one, for theirs",
    async () => {
      const s = `${script.agent}-person`;
      send(script.begin(repo.dir, s, 1, repo.dir));
      edit(s, "a.txt", "A\n");
      send(script.stop(repo.dir, s, repo.dir));
      // While the blocking hook runs, no tool call: the person saves a file of their own.
      repo.write({ "q.txt": "mine\n" });
      send(script.stop(repo.dir, s, repo.dir, true));
      let [turn] = await logIn(repo, s);
      expect(turn.uncertain).toEqual(["q.txt"]);
      // The agent works on; after its last tool call the person touches up a.txt.
      send(script.begin(repo.dir, s, 2, repo.dir));
      edit(s, "b.txt", "B\n");
      send(script.stop(repo.dir, s, repo.dir));
      edit(s, "b.txt", "BB\n");
      repo.write({ "a.txt": "A and mine\n" });
      send(script.stop(repo.dir, s, repo.dir, true));
      [, turn] = await logIn(repo, s);
      expect(turn.changed).toEqual(["a.txt", "b.txt"]);
      expect(turn.uncertain).toEqual(["a.txt"]);
      const refused = rewind(s, script.turnId(1));
      expect(refused.status).toBe(3);
      expect(refused.json.afterLastTool).toEqual(["a.txt", "q.txt"]);
      expect([repo.read("a.txt"), repo.read("q.txt"), repo.read("b.txt")]).toEqual([
        "A and mine\n",
        "mine\n",
        "BB\n",
      ]);
    },
  );

  it("interrupted before its second stop, is still the turn's: the next prompt ends it, and its rewind puts the edit back", async () => {
    const s = `${script.agent}-esc`;
    send(script.begin(repo.dir, s, 1, repo.dir));
    edit(s, "a.txt", "A\n");
    send(script.stop(repo.dir, s, repo.dir));
    edit(s, "b.txt", "B\n");
    // Esc: no second stop. The next prompt begins turn 2.
    send(script.begin(repo.dir, s, 2, repo.dir));
    send(script.stop(repo.dir, s, repo.dir));

    const turns = await logIn(repo, s);
    expect(turns.map((t: any) => [t.turn, t.changed])).toEqual([
      [script.turnId(1), ["a.txt", "b.txt"]],
      [script.turnId(2), []],
    ]);
    const rewound = rewind(s, script.turnId(1));
    expect(rewound.status, rewound.stderr).toBe(0);
    expect([repo.read("a.txt"), repo.read("b.txt")]).toEqual(["a\n", "b\n"]);
  });

  it("interrupted, leaves what the turn did before its stop its own, also a change no tool call reported", async () => {
    const s = `${script.agent}-unreported`;
    send(script.begin(repo.dir, s, 1, repo.dir));
    edit(s, "a.txt", "A\n");
    repo.write({ "c.txt": "by a tool the hooks do not match\n" }); // an MCP server's write, say
    send(script.stop(repo.dir, s, repo.dir));
    edit(s, "b.txt", "B\n");
    send(script.begin(repo.dir, s, 2, repo.dir)); // Esc, then the next prompt
    const [first] = await logIn(repo, s);
    // The stop vouched for c.txt: the turn's state then is a progress mark of the continued turn.
    expect([first.changed, first.uncertain ?? []]).toEqual([["a.txt", "b.txt", "c.txt"], []]);
  });

  it("beside another session's open turn, is attributed to its own session, not taken for uncertain", async () => {
    const other = `${script.agent}-other`;
    const s = `${script.agent}-mine`;
    send(script.begin(repo.dir, other, 1, repo.dir));
    send(script.begin(repo.dir, s, 1, repo.dir));
    edit(s, "x1.txt", "x\n");
    send(script.stop(repo.dir, s, repo.dir));
    edit(s, "y1.txt", "y\n");
    send(script.stop(repo.dir, s, repo.dir, true));
    send(script.stop(repo.dir, other, repo.dir));

    const [mine] = await logIn(repo, s);
    expect(mine).toMatchObject({ changed: ["x1.txt", "y1.txt"] });
    expect(mine.uncertain ?? []).toEqual([]);
    const [theirs] = await logIn(repo, other);
    expect(theirs.changed).toEqual([]);
    const rewound = rewind(s, script.turnId(1));
    expect(rewound.status, rewound.stderr).toBe(0);
    expect([repo.exists("x1.txt"), repo.exists("y1.txt")]).toEqual([false, false]);
  });
});

describe("a touch between turns that no blocked stop explains", () => {
  it("from the command line (a person's), opens no turn again", async () => {
    const send = (event: unknown) =>
      expectQuiet(shellHook(sandbox, installedCommand("claude-code"), event, repo.dir));
    const [script] = SCRIPTS;
    send(script.begin(repo.dir, "p", 1, repo.dir));
    repo.write({ "a.txt": "A\n" });
    send(script.stop(repo.dir, "p", repo.dir));
    expect(sandbox.cli(repo.dir, ["touch", "--session", "p", ".env"]).status).toBe(0);
    repo.write({ ".env": "KEY=mine\n" });
    const [turn] = await logIn(repo, "p");
    expect(turn).toMatchObject({ state: "done", changed: ["a.txt"] });
  });
});
