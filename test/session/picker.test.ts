import { spawn, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { previewText, turnChoices } from "../../src/cli/commands/picker.js";
import type { TurnRecord } from "../../src/types.js";
import { CLI } from "../helpers/repo.js";
import { sessionSandbox, turn } from "./support.js";

const { sandbox, repo } = sessionSandbox();
const hasScript = spawnSync("script", ["--version"]).status === 0;

function record(turnId: string, state: TurnRecord["state"], changed: string[], prompt = ""): TurnRecord {
  return {
    turn: turnId,
    prompt,
    before: "b",
    after: "a",
    changed,
    state,
    startedAt: new Date(0).toISOString(),
  };
}

describe("the rewind picker's content", () => {
  it("offers the turns not yet rewound, newest first, with prompt, age and files changed", () => {
    const choices = turnChoices(
      [
        record("1", "done", ["a"], "fix the bug"),
        record("2", "rewound", []),
        record("3", "open", [], "x".repeat(80)),
      ],
      60_000,
    );
    expect(choices.map((c) => c.value)).toEqual(["3", "1"]);
    expect(choices[1]).toEqual({ value: "1", label: "1 · fix the bug", hint: "1 min ago · 1 file" });
    expect(choices[0].label).toHaveLength(4 + 60);
    expect(choices[0].hint).toMatch(/open$/);
  });

  it("never sends a prompt's or a name's control characters to the terminal, nor half an emoji", () => {
    const [choice] = turnChoices([
      record("1", "done", ["a"], `hi \x1b]0;PWNED\x07 \x1b[2J ${"x".repeat(40)}🎉🎉`),
    ]);
    expect(choice.label).toMatch(/^1 · hi \\e\]0;PWNED\\a \\e\[2J x+…$/);
    expect(choice.label).toHaveLength(4 + 60);
    const [named] = turnChoices([record("t\x1b[2J", "done", ["a"], "hi")]);
    expect(named).toMatchObject({ value: "t\x1b[2J", label: "t\\e[2J · hi" });
    const cut = turnChoices([record("1", "done", ["a"], `${"x".repeat(58)}🎉🎉`)])[0].label;
    expect(cut).toBe(`1 · ${"x".repeat(58)}…`); // not a lone half of the first 🎉
    const text = previewText({
      session: "s",
      to: "1",
      rewoundTurns: ["1", "t\x1b[2J"],
      written: ["evil\x1b]0;PWNED\x07name"],
      deleted: ["new\nline"],
      skipped: [],
      safety: null,
      dryRun: true,
    });
    expect(text).not.toMatch(/[\x07\x1b]/);
    expect(text.split("\n")).toEqual([
      "turns 1, t\\e[2J are undone",
      'write  "evil\\033]0;PWNED\\aname"',
      'delete "new\\nline"',
    ]);
  });

  it("previews what will be written and deleted", () => {
    const text = previewText({
      session: "s",
      to: "2",
      rewoundTurns: ["2", "3"],
      written: ["a.txt"],
      deleted: ["b.txt"],
      skipped: [],
      safety: null,
      dryRun: true,
    });
    expect(text.split("\n")).toEqual(["turns 2, 3 are undone", "write  a.txt", "delete b.txt"]);
  });
});

/** Runs the CLI in a pseudo-terminal (util-linux `script`), answering prompts as they appear. */
async function drive(cwd: string, args: string, steps: [RegExp, string | (() => string)][]): Promise<string> {
  const command = `stty cols 120 rows 40; exec ${process.execPath} ${CLI} ${args}`;
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd,
    env: { ...sandbox.env, TERM: "xterm" },
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  const plain = () => out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
  for (const [wanted, keys] of steps) {
    const deadline = Date.now() + 20_000;
    while (!wanted.test(plain())) {
      if (Date.now() > deadline) throw new Error(`no ${wanted} in:\n${plain()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.stdin.write(typeof keys === "string" ? keys : keys());
  }
  const status = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  expect(status).toBe(0);
  return plain();
}

describe.runIf(hasScript)("the rewind picker on a terminal", () => {
  it("lists the turns, previews the change, and rewinds after confirmation", async () => {
    const r = repo({ "f.txt": "0\n" });
    turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }), "first prompt");
    turn(r, "s", "2", () => r.write({ "f.txt": "2\n", "new.txt": "n" }), "second prompt");
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\x1b[B"], // down: from turn 2 (newest) to turn 1
      [/● 1 · first prompt/, "\r"],
      [/Which files\?/, "\r"], // all files
      [/Rewind 2 turn/, "\r"],
    ]);
    expect(screen).toMatch(/2 · second prompt/);
    expect(screen).toMatch(/write\s+f\.txt/);
    expect(screen).toMatch(/delete new\.txt/);
    expect([r.read("f.txt"), r.exists("new.txt")]).toEqual(["0\n", false]);
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["rewound", "rewound"]);
  });

  it("shows a refusal and asks whether to rewind anyway, overwriting only when told", async () => {
    const r = repo({ "a.txt": "a0\n" });
    turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }), "first prompt");
    r.write({ "a.txt": "mine\n" }); // a person's edit since
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      [/Rewind anyway \(overwrite\)\?/, "\x1b[D"], // left: from "No" to "Yes"
      [/● Yes/, "\r"],
      [/Rewind 1 turn/, "\r"],
    ]);
    expect(screen).toMatch(/refused/);
    expect(screen).toMatch(/a\.txt/);
    expect(r.read("a.txt")).toBe("a0\n");
  });

  it("rewinds only what it previewed: a turn that ended meanwhile is shown in a new preview first", async () => {
    const r = repo({ "f.txt": "0\n" });
    turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }), "first prompt");
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      // The agent ends another turn while the person reads the preview, then they confirm.
      [
        /Rewind 1 turn\?/,
        () => {
          turn(r, "s", "2", () => r.write({ "late.txt": "2\n" }), "second prompt");
          return "\r";
        },
      ],
      [/Rewind 2 turns\?/, "\r"],
    ]);
    expect(screen).toMatch(/changed since the preview/);
    expect(screen).toMatch(/turns 1, 2 are undone/);
    expect([r.read("f.txt"), r.exists("late.txt")]).toEqual(["0\n", false]);
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["rewound", "rewound"]);
  });

  it("shows a file edited while the preview was on screen as a refusal, rewinding only when told", async () => {
    const r = repo({ "a.txt": "a0\n" });
    turn(r, "s", "1", () => r.write({ "a.txt": "a0\nt1\n" }), "first prompt");
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      // A person appends to the file while reading the preview, then confirms it.
      [
        /Rewind 1 turn\?/,
        () => {
          r.write({ "a.txt": "a0\nt1\nmine\n" });
          return "\r";
        },
      ],
      [/Rewind anyway \(overwrite\)\?/, "\x1b[D"], // left: from "No" to "Yes"
      [/Rewind anyway[\s\S]*● Yes/, "\r"],
      [/Rewind anyway[\s\S]*◆\s+Rewind 1 turn\?/, "\r"],
    ]);
    expect(screen).toMatch(/changed since: a\.txt/);
    expect(r.read("a.txt")).toBe("a0\n");
    expect(r.ok("log")[0].state).toBe("rewound");
  });

  it("changes nothing when a refusal after the preview is declined", async () => {
    const r = repo({ "a.txt": "a0\n" });
    turn(r, "s", "1", () => r.write({ "a.txt": "a0\nt1\n" }), "first prompt");
    await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      [
        /Rewind 1 turn\?/,
        () => {
          r.write({ "a.txt": "a0\nt1\nmine\n" });
          return "\r";
        },
      ],
      [/Rewind anyway \(overwrite\)\?/, "\x1b"], // Esc
    ]);
    expect(r.read("a.txt")).toBe("a0\nt1\nmine\n");
    expect(r.ok("log")[0].state).toBe("done");
  });

  it("offers only some files after the turn is chosen, and rewinds just those", async () => {
    const r = repo({ "f.txt": "0\n" });
    turn(r, "s", "1", () => r.write({ "f.txt": "1\n", "new.txt": "n" }), "first prompt");
    await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      [/Which files\?/, "\x1b[B"], // down: "only some files"
      [/● only some files/, "\r"],
      [/Put back which files/, "\x1b[B"], // down to new.txt
      [/new\.txt/, " "],
      [/◼ new\.txt/, "\r"],
      [/Rewind 1 turn/, "\r"],
    ]);
    expect([r.read("f.txt"), r.exists("new.txt")]).toEqual(["1\n", false]);
    expect(r.ok("log")[0]).toMatchObject({ state: "done", rewoundPaths: ["new.txt"] });
  });
});
