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
    // A turn left open when its conversation ended (SessionEnd) reads as `log` shows it.
    const abandoned = { ...record("4", "open", []), abandonedAt: new Date(0).toISOString() };
    expect(turnChoices([abandoned], 60_000)[0].hint).toBe("1 min ago · ended");
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
async function drive(
  cwd: string,
  args: string,
  steps: [RegExp, string | (() => string)][],
  size = "cols 120 rows 40",
): Promise<string> {
  const command = `stty ${size}; exec ${process.execPath} ${CLI} ${args}`;
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
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }), "first prompt");
    await turn(r, "s", "2", () => r.write({ "f.txt": "2\n", "new.txt": "n" }), "second prompt");
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
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }), "first prompt");
    r.write({ "a.txt": "mine\n" }); // a person's edit since
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      [/Rewind anyway\?/, "\x1b[B"], // down: from "No" to "Yes" (no other file to offer)
      [/● Yes, overwrite them/, "\r"],
      [/Rewind 1 turn/, "\r"],
    ]);
    expect(screen).toMatch(/refused/);
    expect(screen).toMatch(/a\.txt/);
    expect(screen).not.toMatch(/Only the other/);
    // The edit it writes over is named in the preview and once done (found in a trial: it was not).
    expect(screen).toMatch(/overwrites edits made since: a\.txt/);
    expect(screen).toMatch(/wrote 1 file, deleted 0 files, overwrote a\.txt/);
    expect(r.read("a.txt")).toBe("a0\n");
  });

  it("offers to end an open turn and rewind it, not to overwrite files, when the turn is still open", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }), "first prompt");
    r.ok("turn", "begin", "--session", "s", "--turn", "2", "--prompt", "second prompt");
    r.write({ "a.txt": "a2\n" });
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\x1b[B"], // down: from the open turn 2 to turn 1
      [/● 1 · first prompt/, "\r"],
      [/Rewind anyway\?/, "\x1b[B"],
      [/● Yes, end that turn and rewind it too/, "\x1b[A"], // back up: No
      [/● No, change nothing/, "\r"],
    ]);
    expect(screen).not.toMatch(/Yes, overwrite them/);
    expect(r.read("a.txt")).toBe("a2\n");
  });

  it("after a refusal, offers to rewind only the files nobody changed since, and leaves the others", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n" }), "first");
    r.write({ "a.txt": "mine\n" }); // a person's edit since
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      [/Rewind anyway\?/, "\x1b[B"], // down: "Only the other 2 files"
      [/● Only the other 2 files, leaving those/, "\r"],
      [/Rewind 1 turn/, "\r"],
    ]);
    expect(screen).toMatch(/changed since: a\.txt/);
    expect([r.read("a.txt"), r.read("b.txt"), r.exists("c.txt")]).toEqual(["mine\n", "b0\n", false]);
    expect(r.ok("log")[0]).toMatchObject({ state: "done", rewoundPaths: ["b.txt", "c.txt"] });
  });

  it("rewinds only what it previewed: a turn that ended meanwhile is shown in a new preview first", async () => {
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }), "first prompt");
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      // The agent ends another turn while the person reads the preview, then they confirm.
      [
        /Rewind 1 turn\?/,
        () => {
          // From the agent's hook, as the command line runs it.
          r.ok("turn", "begin", "--session", "s", "--turn", "2", "--prompt", "second prompt");
          r.write({ "late.txt": "2\n" });
          r.ok("turn", "end", "--session", "s", "--turn", "2");
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
    await turn(r, "s", "1", () => r.write({ "a.txt": "a0\nt1\n" }), "first prompt");
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
      [/Rewind anyway\?/, "\x1b[B"], // down: from "No" to "Yes"
      [/Rewind anyway[\s\S]*● Yes/, "\r"],
      [/Rewind anyway[\s\S]*◆\s+Rewind 1 turn\?/, "\r"],
    ]);
    expect(screen).toMatch(/changed since: a\.txt/);
    expect(r.read("a.txt")).toBe("a0\n");
    expect(r.ok("log")[0].state).toBe("rewound");
  });

  it("changes nothing when a refusal after the preview is declined", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a0\nt1\n" }), "first prompt");
    await drive(r.dir, "rewind", [
      [/before which turn/, "\r"],
      [
        /Rewind 1 turn\?/,
        () => {
          r.write({ "a.txt": "a0\nt1\nmine\n" });
          return "\r";
        },
      ],
      [/Rewind anyway\?/, "\x1b"], // Esc
    ]);
    expect(r.read("a.txt")).toBe("a0\nt1\nmine\n");
    expect(r.ok("log")[0].state).toBe("done");
  });

  it("offers only some files after the turn is chosen, and rewinds just those", async () => {
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n", "new.txt": "n" }), "first prompt");
    const screen = await drive(r.dir, "rewind", [
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
    // Said as it is: the turn stays done, one file of it went back.
    expect(screen).toContain("turn 1: only new.txt goes back");
    expect(screen).not.toContain("turn 1 is undone");
    expect(screen).toContain("rewound turn 1 (only new.txt): wrote 0 files, deleted 1 file");
  });

  it("draws its prompts whole on a terminal that reports no size (0 columns, 0 rows)", async () => {
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }), "first prompt");
    const screen = await drive(
      r.dir,
      "rewind",
      [
        [/Put the files back as they were before which turn\?/, "\r"],
        [/Rewind 1 turn\?/, "\r"],
      ],
      "cols 0 rows 0",
    );
    expect(screen).toMatch(/● 1 · first prompt/);
    expect(r.read("f.txt")).toBe("0\n");
  });
});

describe("turns whose snapshots are gone", () => {
  /** Three turns of session s, then retention keeps only the two newest snapshots (turn 3's). */
  async function expiredTwo() {
    const r = repo({ "a.txt": "a\n" });
    for (const id of ["1", "2", "3"]) await turn(r, "s", id, () => r.write({ [`f${id}.txt`]: `${id}\n` }));
    expect(r.ok("gc", "--keep", "2").dropped).toHaveLength(4);
    return r;
  }

  it("are marked gone by log, in its JSON and in its state column", async () => {
    const r = await expiredTwo();
    const turns = r.ok("log");
    expect(turns.map((t: any) => [t.turn, t.state, t.gone])).toEqual([
      ["1", "done", true],
      ["2", "done", true],
      ["3", "done", undefined],
    ]);
    const human = r.cli(["log"]);
    expect(human.status).toBe(0);
    const rows = human.stdout.split("\n").filter((l) => /^ {2}\d/.test(l));
    expect(rows.map((l) => l.trim().split(/\s+/).slice(0, 2))).toEqual([
      ["1", "gone"],
      ["2", "gone"],
      ["3", "done"],
    ]);
    expect(human.stdout).toMatch(/gone: the turn's snapshots expired or were dropped/);
    // Rewinding to one still says why it cannot (the listing only says so first).
    expect(r.cli(["rewind", "--to", "2", "--dry-run"]).stderr).toMatch(/before turn 2 .* is gone/);
  });

  it("are offered disabled, with the reason, a rewind to an earlier turn needing them too", () => {
    const gone = (t: TurnRecord): TurnRecord => ({ ...t, gone: true });
    const choices = turnChoices([
      gone(record("1", "done", ["a"], "one")),
      record("2", "done", ["a"], "two"),
      gone(record("3", "done", ["a"], "three")),
      record("4", "rewound", ["a"], "four"),
      record("5", "done", ["a"], "five"),
    ]);
    expect(
      choices.map((c) => [c.value, c.disabled ?? false, c.hint.startsWith("gone") ? c.hint : ""]),
    ).toEqual([
      ["5", false, ""],
      ["3", true, "gone: its snapshots expired or were dropped"],
      ["2", true, "gone: the snapshots of turn 3 expired or were dropped"],
      ["1", true, "gone: its snapshots expired or were dropped"],
    ]);
  });

  it.runIf(hasScript)("cannot be picked on a terminal: only the turn still rewindable is", async () => {
    const r = await expiredTwo();
    const screen = await drive(r.dir, "rewind", [
      [/before which turn/, "\x1b[B"], // down: past turn 3 only to what can be chosen
      [/gone: its snapshots expired/, "\r"],
      [/Rewind 1 turn/, "\r"],
    ]);
    expect(screen).toMatch(/2 · prompt 2 \(gone: its snapshots expired or were dropped\)/);
    expect(screen).not.toMatch(/is gone/);
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["done", "done", "rewound"]);
    expect([r.exists("f3.txt"), r.exists("f2.txt")]).toEqual([false, true]);
  });

  it("leave nothing to pick when the newest turn's are gone too", async () => {
    const r = await expiredTwo();
    const [, , third] = r.ok("log");
    expect(r.cli(["drop", third.after]).status).toBe(0);
    expect(r.ok("log").every((t: any) => t.gone)).toBe(true);
    if (!hasScript) return;
    const screen = await drive(r.dir, "rewind", []);
    expect(screen).toMatch(/no turn to rewind: the snapshots of every turn are gone/);
  });
});
