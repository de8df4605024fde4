import { execFileSync, spawnSync } from "node:child_process";
import { lstatSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openIn, sessionSandbox, turn } from "./support.js";
import { listIn, logIn, doctorIn } from "../helpers/in-process.js";

const { sandbox, repo, plain } = sessionSandbox();

describe("rewind and redo through the CLI", () => {
  it("rewinds to the middle of three turns exactly, names the rewound turns, and redo brings them back", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "a2\n", "new.txt": "n2\n" }));
    const third = await turn(r, "s", "3", () => {
      r.write({ "b.txt": "b3\n" });
      r.remove("new.txt");
    });
    expect(third.changed).toEqual(["b.txt", "new.txt"]);

    const report = r.ok("rewind", "--session", "s", "--to", "2");
    expect(report).toMatchObject({ session: "s", to: "2", rewoundTurns: ["2", "3"], deleted: [] });
    expect(report.written.sort()).toEqual(["a.txt", "b.txt"]);
    expect(report.safety).toMatch(/^[0-9a-f]{40}$/);
    expect([r.read("a.txt"), r.read("b.txt"), r.exists("new.txt")]).toEqual(["a1\n", "b0\n", false]);
    expect((await logIn(r, "s")).map((t: any) => [t.turn, t.state])).toEqual([
      ["1", "done"],
      ["2", "rewound"],
      ["3", "rewound"],
    ]);

    const redo = r.ok("redo", "--session", "s");
    expect(redo.restoredTurns).toEqual(["2", "3"]);
    expect(redo.written.sort()).toEqual(["a.txt", "b.txt"]);
    expect([r.read("a.txt"), r.read("b.txt"), r.exists("new.txt")]).toEqual(["a2\n", "b3\n", false]);
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["done", "done", "done"]);
    expect(r.cli(["redo", "--json"]).json.error.code).toBe("nothing-to-redo");
  });

  it("says a redo right after a redo has nothing left because the latest rewind was redone", async () => {
    const r = repo({ "a.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "2\n" }));
    r.ok("rewind", "--session", "s", "--to", "2"); // never redone: a turn began after it
    await turn(r, "s", "3", () => r.write({ "a.txt": "3\n" }));
    r.ok("rewind", "--session", "s", "--to", "3");
    r.ok("redo", "--session", "s");
    // Found in a trial: it named the older rewind, to turn 2, as the reason.
    const again = r.cli(["redo", "--session", "s", "--json"]);
    expect(again.json.error).toEqual({
      code: "nothing-to-redo",
      message: "session s has no rewind to redo: its latest rewind, to turn 3, was redone already",
    });
    expect(r.read("a.txt")).toBe("3\n");
  });

  it("leaves an excluded file a turn put where a directory was, and the rewind ends (excluded, status 0)", async () => {
    const r = repo({ ".ghostcommit.json": '{"largeFileBytes": 100}\n', "d/f": "1\n", "a.txt": "a0\n" });
    await turn(r, "s", "1", () => {
      r.remove("d");
      r.write({ d: "x".repeat(200), "a.txt": "a1\n" });
    });
    const skipped = [
      { path: "d/f", reason: "excluded" },
      { path: "d", reason: "excluded" },
    ];
    const plan = r.cli(["rewind", "--to", "1", "--dry-run", "--json"]);
    expect([plan.status, plan.json.written, plan.json.skipped]).toEqual([0, ["a.txt"], skipped]);
    const done = r.cli(["rewind", "--to", "1", "--json"]);
    expect([done.status, done.json.written, done.json.skipped]).toEqual([0, ["a.txt"], skipped]);
    expect([r.read("a.txt"), r.read("d")]).toEqual(["a0\n", "x".repeat(200)]);
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["rewound"]);
    expect(r.cli(["doctor"]).status).toBe(0);
  });

  it("puts back a directory the turn replaced with a symlink, though the link's target has a file of the same name", async () => {
    // A monorepo's `rm -rf lib && ln -s shared lib` in the agent's shell: shared/index.js is
    // reachable as lib/index.js through the link, and must not pass for the file the turn removed.
    const r = repo({ "lib/index.js": "lib\n", "shared/index.js": "shared\n" });
    await turn(r, "s", "1", () => {
      r.remove("lib");
      r.symlink("shared", "lib");
    });
    const report = r.ok("rewind", "--session", "s", "--to", "1");
    expect([report.written, report.deleted, report.skipped]).toEqual([["lib/index.js"], ["lib"], []]);
    expect([
      lstatSync(r.path("lib")).isSymbolicLink(),
      r.read("lib/index.js"),
      r.read("shared/index.js"),
    ]).toEqual([false, "lib\n", "shared\n"]);
    expect(r.status()).toBe("");
    r.ok("redo", "--session", "s");
    expect([lstatSync(r.path("lib")).isSymbolicLink(), r.read("shared/index.js")]).toEqual([
      true,
      "shared\n",
    ]);
  });

  it("says an undo from inside a turn conflicts with that turn's own edits, not that someone edited after the session", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    r.ok("turn", "begin", "--session", "s", "--turn", "2");
    r.write({ "a.txt": "a1\nthe open turn's line\n" });
    const refused = r.cli(["rewind", "--session", "s", "--keep-open-turn", "--to", "1"]);
    expect([refused.status, refused.stderr]).toEqual([
      3,
      "ghostcommit: rewind refused: 1 file was changed after the turns being rewound, by the open turn 2 itself, another session or a person (a.txt); nothing was changed; `ghostcommit rewind --session s --to 1 --keep-open-turn -- PATH…` rewinds only the paths it names, --force overwrites\n",
    ]);
    expect(r.read("a.txt")).toBe("a1\nthe open turn's line\n");
  });

  it("keeps an undo made from inside a later turn undone when rewinding further back", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "b.txt": "b2\n" }));
    // The agent undoes turn 2 from inside turn 3 (MCP, /ghostcommit-rewind), then edits on.
    await turn(r, "s", "3", () => {
      r.ok("rewind", "--session", "s", "--keep-open-turn", "--to", "2");
      r.write({ "c.txt": "c3\n" });
    });
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a1\n", "b0\n"]);
    const report = r.ok("rewind", "--session", "s", "--to", "1");
    expect(report.rewoundTurns).toEqual(["1", "3"]);
    // Files as before turn 1: turn 2's edit does not come back with the undo of turn 3.
    expect([r.read("a.txt"), r.read("b.txt"), r.read("c.txt")]).toEqual(["a0\n", "b0\n", "c0\n"]);
    r.ok("redo", "--session", "s");
    expect([r.read("a.txt"), r.read("b.txt"), r.read("c.txt")]).toEqual(["a1\n", "b0\n", "c3\n"]);
  });

  it("takes a file an undone turn changed, then undone from inside the next, for the session's own when rewinding further back", async () => {
    const r = repo({ "x.txt": "v0\n", "y.txt": "y0\n" });
    await turn(r, "s", "1", () => r.write({ "x.txt": "v1\n" }));
    await turn(r, "s", "2", () => r.write({ "x.txt": "v2\n", "y.txt": "y2\n" }));
    // Turn 3 began with turn 2's x.txt, then undid turn 2 from inside: no one else was involved.
    await turn(r, "s", "3", () => r.ok("rewind", "--session", "s", "--keep-open-turn", "--to", "2"));
    expect(r.read("x.txt")).toBe("v1\n");
    const back = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect(back.status, back.stdout).toBe(0);
    expect(back.json.rewoundTurns).toEqual(["1", "3"]);
    expect([r.read("x.txt"), r.read("y.txt")]).toEqual(["v0\n", "y0\n"]);
    // A person's save between two turns is still told apart: a fourth turn, begun after it.
    r.ok("redo", "--session", "s");
    r.write({ "x.txt": "mine\n" });
    await turn(r, "s", "4", () => r.write({ "x.txt": "v4\n" }));
    const refused = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.error.code).toBe("conflict");
    expect(refused.json.betweenTurns).toEqual(["x.txt"]);
  });

  it("takes a file a rewind between two turns put back, then redone from inside the next, for the session's own", async () => {
    const r = repo({ "log.txt": "0\n", "keep.txt": "k\n" });
    await turn(r, "s", "1", () => r.write({ "log.txt": "0\n1\n" }));
    await turn(r, "s", "2", () => r.write({ "log.txt": "0\n1\n2\n", "t2.txt": "2\n" }));
    await turn(r, "s", "3", () => r.write({ "log.txt": "0\n1\n2\n3\n" }));
    // Rewound between turns; the next prompt's agent is asked to redo it (found in a trial).
    r.ok("rewind", "--session", "s", "--to", "2");
    await turn(r, "s", "4", () => r.ok("redo", "--session", "s", "--keep-open-turn"));
    expect(r.read("log.txt")).toBe("0\n1\n2\n3\n");
    // Nobody else touched log.txt: turn 4 began with what the session's own rewind left.
    for (const to of ["4", "3", "2"]) {
      const plan = r.cli(["rewind", "--session", "s", "--to", to, "--dry-run", "--json"]);
      expect(plan.status, `--to ${to}: ${plan.stdout}`).toBe(0);
    }
    const back = r.ok("rewind", "--session", "s", "--to", "2");
    expect(back.rewoundTurns).toEqual(["2", "3", "4"]);
    expect([r.read("log.txt"), r.exists("t2.txt")]).toEqual(["0\n1\n", false]);
    // A person's save between turns is still told apart.
    r.ok("redo", "--session", "s");
    r.write({ "log.txt": "mine\n" });
    await turn(r, "s", "5", () => r.write({ "log.txt": "mine\n5\n" }));
    const refused = r.cli(["rewind", "--session", "s", "--to", "3", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.betweenTurns).toEqual(["log.txt"]);
  });

  it("counts the turns an undo from inside a later turn rewound as done again once that later turn is rewound", async () => {
    const r = repo({ "x.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "x.txt": "1\n" }));
    // The agent undoes turn 1 from inside turn 2 (the person asked it to), and ends the turn.
    await turn(r, "s", "2", () => r.ok("rewind", "--session", "s", "--keep-open-turn", "--to", "1"));
    expect(r.read("x.txt")).toBe("0\n");
    const states = async () => (await logIn(r, "s")).map((t: any) => `${t.turn}:${t.state}`);
    expect(await states()).toEqual(["1:rewound", "2:done"]);
    // Rewinding turn 2 undoes its undo: turn 1's work is on disk again, and the log says so.
    r.ok("rewind", "--session", "s", "--to", "2");
    expect(r.read("x.txt")).toBe("1\n");
    expect(await states()).toEqual(["1:done", "2:rewound"]);
    // Redo puts turn 2 back, its undo of turn 1 with it.
    r.ok("redo", "--session", "s");
    expect([r.read("x.txt"), ...(await states())]).toEqual(["0\n", "1:rewound", "2:done"]);
    r.ok("rewind", "--session", "s", "--to", "2");
    // Turn 1 is rewound like any done turn.
    expect(r.ok("rewind", "--session", "s", "--to", "1").rewoundTurns).toEqual(["1"]);
    expect([r.read("x.txt"), ...(await states())]).toEqual(["0\n", "1:rewound", "2:rewound"]);
  });

  it("counts the turns a redo from inside a later turn brought back as rewound again once that later turn is rewound", async () => {
    const r = repo({ "a.txt": "a\n" });
    await turn(r, "s", "1", () => r.write({ "b.txt": "b\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    // The agent redoes turn 1 from inside turn 2 (the person changed their mind), and ends it.
    await turn(r, "s", "2", () => r.ok("redo", "--session", "s", "--keep-open-turn"));
    const states = async () => (await logIn(r, "s")).map((t: any) => `${t.turn}:${t.state}`);
    expect([r.exists("b.txt"), ...(await states())]).toEqual([true, "1:done", "2:done"]);
    // Rewinding turn 2 takes its redo back: turn 1's work is gone again, and the log says so.
    expect(r.ok("rewind", "--session", "s", "--to", "2").deleted).toEqual(["b.txt"]);
    expect([r.exists("b.txt"), ...(await states())]).toEqual([false, "1:rewound", "2:rewound"]);
    // Nothing is offered that would do nothing: turn 1 is not rewindable again.
    expect(r.cli(["rewind", "--session", "s", "--to", "1", "--json"]).status).not.toBe(0);
    // Redo puts turn 2 back, its redo of turn 1 with it.
    r.ok("redo", "--session", "s");
    expect([r.exists("b.txt"), ...(await states())]).toEqual([true, "1:done", "2:done"]);
  });

  it("reverses several undos from inside one turn in their order: a rewind, its redo, the rewind again", async () => {
    const r = repo({ "a.txt": "a\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "v1\n" }));
    await turn(r, "s", "2", () => r.write({ "f.txt": "v2\n" }));
    // Inside turn 3 the agent undoes turn 2, the person changes their mind twice.
    await turn(r, "s", "3", () => {
      r.ok("rewind", "--session", "s", "--keep-open-turn", "--to", "2");
      r.ok("redo", "--session", "s", "--keep-open-turn");
      r.ok("rewind", "--session", "s", "--keep-open-turn", "--to", "2");
    });
    const states = async () => (await logIn(r, "s")).map((t: any) => `${t.turn}:${t.state}`);
    expect([r.read("f.txt"), ...(await states())]).toEqual(["v1\n", "1:done", "2:rewound", "3:done"]);
    // Rewinding turn 3 takes back all three: turn 2's work is on disk again, and done.
    r.ok("rewind", "--session", "s", "--to", "3");
    expect([r.read("f.txt"), ...(await states())]).toEqual(["v2\n", "1:done", "2:done", "3:rewound"]);
    // So turn 2 is rewindable, as any done turn.
    expect(r.ok("rewind", "--session", "s", "--to", "2", "--dry-run").rewoundTurns).toEqual(["2"]);
    // Redo makes turn 3's undos again: turn 2 is rewound once more.
    r.ok("redo", "--session", "s");
    expect([r.read("f.txt"), ...(await states())]).toEqual(["v1\n", "1:done", "2:rewound", "3:done"]);
  });

  it("counts them done again also when later turns ran before that turn is rewound", async () => {
    const r = repo({ "a.txt": "a\n" });
    await turn(r, "k", "1", () => r.write({ "a.txt": "t1\n" }));
    await turn(r, "k", "2", () => r.write({ "a.txt": "t2\n" }));
    await turn(r, "k", "3", () => r.ok("rewind", "--session", "k", "--keep-open-turn", "--to", "2"));
    await turn(r, "k", "4", () => {});
    r.ok("rewind", "--session", "k", "--to", "3");
    expect(r.read("a.txt")).toBe("t2\n");
    expect((await logIn(r, "k")).map((t: any) => `${t.turn}:${t.state}`)).toEqual([
      "1:done",
      "2:done",
      "3:rewound",
      "4:rewound",
    ]);
    const back = r.cli(["rewind", "--session", "k", "--to", "1", "--json"]);
    expect(back.status, back.stderr).toBe(0);
    expect([back.json.rewoundTurns, r.read("a.txt")]).toEqual([["1", "2"], "a\n"]);
  });

  it("does not refuse a file a person already put back as the rewind would, as its dry run said", async () => {
    const r = repo({ "a.txt": "a\n", "b.txt": "b\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a\na1\n", "b.txt": "b\nb1\n" }));
    r.git("checkout", "a.txt");
    const plan = r.ok("rewind", "--to", "1", "--dry-run");
    const done = r.cli(["rewind", "--to", "1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    for (const report of [plan, done.json])
      expect([report.written, report.overridden]).toEqual([["b.txt"], undefined]);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a\n", "b\n"]);
  });

  it("rewinds a turn that made a file ignored (git init, .gitignore) leaving that file, as its dry run said", async () => {
    const dir = plain({ "notes.md": "n0\n", "b.bin": "binary\n" });
    await turn(dir, "s", "1", () => dir.write({ "notes.md": "n1\n" }));
    await turn(dir, "s", "2", () => {
      sandbox.git(dir.dir, "init", "-q");
      dir.write({ ".gitignore": "*.bin\n", "notes.md": "n2\n" });
    });
    const plan = dir.ok("rewind", "--to", "2", "--dry-run");
    const done = dir.cli(["rewind", "--to", "2", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json.written).toEqual(plan.written);
    expect([dir.read("notes.md"), dir.read("b.bin"), dir.exists(".gitignore")]).toEqual([
      "n1\n",
      "binary\n",
      false,
    ]);
  });

  it("keeps a person's edit made after an undo between turns when rewinding further back", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "b.txt": "b2\n" }));
    r.ok("rewind", "--session", "s", "--to", "2");
    r.write({ "b.txt": "mine\n" });
    await turn(r, "s", "3", () => r.write({ "b.txt": "mine, then the agent's\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a0\n", "mine\n"]);
  });

  it("leaves a file a turn deleted when settings exclude it since, and redo has nothing to take for a conflict", async () => {
    const r = repo({ "a.txt": "a0\n", ".ghostcommit.json": "{}\n" });
    r.write({ "gen.txt": "generated output 12345\n" });
    await turn(r, "s", "1", () => {
      r.remove("gen.txt");
      r.write({ "a.txt": "a1\n" });
    });
    r.write({ ".ghostcommit.json": '{"largeFileBytes": 5}\n' });
    const rewind = r.ok("rewind", "--to", "1");
    expect([rewind.written, rewind.skipped]).toEqual([["a.txt"], [{ path: "gen.txt", reason: "excluded" }]]);
    expect(r.exists("gen.txt")).toBe(false);
    expect(r.cli(["redo"]).status).toBe(0);
    expect([r.read("a.txt"), r.exists("gen.txt")]).toEqual(["a1\n", false]);
  });

  it("says which files the rewound turns made but did not capture, and leaves them as they are", async () => {
    const r = repo({ "a.txt": "a0\n", ".ghostignore": "*.secret\n" });
    r.write({ "old.secret": "there before\n" });
    const big = Buffer.alloc(11 * 1024 * 1024, 7); // past the 10 MiB limit for untracked files
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "model.bin": big, "key.secret": "k\n" }));
    await turn(r, "s", "2", () => r.write({ "gone.bin": big }));
    await turn(r, "s", "3", () => r.remove("gone.bin"));
    const run = r.cli(["rewind", "--session", "s", "--to", "1"]);
    expect(run.status, run.stderr).toBe(0); // a skip of what was never captured is not a failure
    expect(run.stdout).toContain(
      "skip   model.bin (excluded: the target or the safety snapshot lacks it, so it is left as it is)",
    );
    const report = r.ok("redo", "--session", "s") && r.ok("rewind", "--session", "s", "--to", "1");
    expect(report.written).toEqual(["a.txt"]);
    // Only what the turns added and is still there: not what was excluded before them, not a
    // file a later turn removed.
    expect(report.skipped).toEqual([
      { path: "key.secret", reason: "excluded", detail: "ghostignore" },
      { path: "model.bin", reason: "excluded" },
    ]);
    expect(r.read("a.txt")).toBe("a0\n");
    expect(r.exists("model.bin") && r.exists("key.secret") && r.exists("old.secret")).toBe(true);
    // Limited to some paths, only theirs.
    r.ok("redo", "--session", "s");
    expect(r.ok("rewind", "--session", "s", "--to", "1", "a.txt").skipped).toEqual([]);
  });

  it("leaves a file a turn made that settings exclude since (.ghostignore, a lower size limit), without a conflict", async () => {
    for (const exclude of [
      (r: ReturnType<typeof repo>) => r.write({ ".ghostignore": "gen/\n" }),
      (r: ReturnType<typeof repo>) => r.write({ ".ghostcommit.json": JSON.stringify({ largeFileBytes: 1 }) }),
    ]) {
      const r = repo({ "a.txt": "a0\n" });
      await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "gen/out.txt": "generated\n" }));
      exclude(r);
      // Nobody changed gen/out.txt since the turn: it is not a conflict, and it is not deleted.
      const rewound = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
      expect([rewound.status, rewound.stderr]).toEqual([0, ""]);
      expect(rewound.json.skipped).toEqual([{ path: "gen/out.txt", reason: "excluded" }]);
      expect([r.read("gen/out.txt"), r.read("a.txt")]).toEqual(["generated\n", "a0\n"]);
    }
  });

  it("leaves a file the turn made that its before-snapshot's .ghostignore kept out, when the turn removed that rule", async () => {
    for (const r of [plain({ "a.txt": "a0\n" }), repo({ "a.txt": "a0\n" })]) {
      r.write({ ".ghostignore": "*.secret\n" });
      await turn(r, "s", "1", () => {
        r.remove(".ghostignore");
        r.write({ "prod.secret": "API_KEY=1\n", "a.txt": "a1\n" });
      });
      const rewound = r.ok("rewind", "--session", "s", "--to", "1");
      expect([rewound.written, rewound.deleted, rewound.skipped]).toEqual([
        [".ghostignore", "a.txt"],
        [],
        [{ path: "prod.secret", reason: "excluded" }],
      ]);
      expect([r.read(".ghostignore"), r.read("prod.secret")]).toEqual(["*.secret\n", "API_KEY=1\n"]);
    }
  });

  it("leaves a touched file .ghostignore keeps out, without taking it for a conflict", async () => {
    const r = repo({ a: "a\n", ".ghostignore": "local.cfg\n" });
    r.write({ "local.cfg": "v1\n" });
    const session = (await openIn(sandbox, r.dir)).session("s");
    await session.beginTurn("1");
    r.ok("touch", "--session", "s", "local.cfg", "a"); // as an agent's hook reports its edits
    r.write({ "local.cfg": "v2\n", a: "a2\n" });
    await session.progress([r.path("local.cfg"), r.path("a")]); // a progress mark after the edit
    await session.endTurn("1");
    // Touched, its content is still never captured: not into the turn's before-state, nor a mark.
    const [{ before }] = await logIn(r, "s");
    const shown = r.ok("show", before);
    expect(shown.files.map((f: { path: string }) => f.path)).not.toContain("local.cfg");
    expect(shown.excluded).toContainEqual(
      expect.objectContaining({ path: "local.cfg", reason: "ignore-file" }),
    );
    const storeGit = `${(await doctorIn(r)).store}/git`;
    for (const content of ["v1\n", "v2\n"]) {
      const blob = execFileSync("git", ["hash-object", "--stdin"], { input: content }).toString().trim();
      const held = spawnSync("git", ["cat-file", "-e", blob], { env: { ...sandbox.env, GIT_DIR: storeGit } });
      expect(held.status, `the store holds ${JSON.stringify(content)}`).not.toBe(0);
    }
    const rewound = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect([rewound.status, rewound.stderr]).toEqual([0, ""]);
    expect(rewound.json.skipped).toEqual([{ path: "local.cfg", reason: "excluded", detail: "ghostignore" }]);
    expect([r.read("a"), r.read("local.cfg")]).toEqual(["a\n", "v2\n"]);
  });

  it("takes a tool call's mark with its touch: before the tool runs, a person's earlier save is not the agent's", async () => {
    // An embedding agent reporting each edit tool before it runs (touched with mark "before"),
    // and after it (progress), as the Claude Code hooks do.
    for (const personSaves of [true, false]) {
      const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
      const session = (await openIn(sandbox, r.dir)).session("s");
      await session.beginTurn("1");
      if (personSaves) r.write({ "a.txt": "a-person\n" });
      for (const [file, content] of [
        ["a.txt", "a-agent\n"],
        ["b.txt", "b-agent\n"],
      ]) {
        await session.touched([r.path(file)], { continuing: true, mark: "before" });
        r.write({ [file]: content });
        await session.progress([r.path(file)], { continuing: true });
      }
      await session.endTurn("1", { everyToolMarked: true });
      const [logged] = await logIn(r, "s");
      expect(logged.changed).toEqual(["a.txt", "b.txt"]);
      expect(logged.uncertain).toEqual(personSaves ? ["a.txt"] : undefined);
      // The command line's log says so too, not only --json (found in a trial).
      const shown = r.cli(["log", "--session", "s"]).stdout;
      if (personSaves) expect(shown).toContain("        maybe not the agent's: a.txt\n");
      else expect(shown).not.toContain("maybe not the agent's");
      const rewound = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
      expect(rewound.status).toBe(personSaves ? 3 : 0);
      expect([r.read("a.txt"), r.read("b.txt")]).toEqual(
        personSaves ? ["a-agent\n", "b-agent\n"] : ["a0\n", "b0\n"],
      );
    }
  });

  it("puts back a file the turn replaced with a directory", async () => {
    const r = repo({ d: "a file\n", k: "keep\n" });
    await turn(r, "s", "1", () => {
      r.remove("d");
      r.write({ "d/z": "z\n" });
    });
    const rewound = r.ok("rewind", "--session", "s", "--to", "1");
    expect([rewound.written, rewound.deleted, rewound.skipped]).toEqual([["d"], ["d/z"], []]);
    expect([r.read("d"), r.read("k")]).toEqual(["a file\n", "keep\n"]);
  });

  it("rewinds a session whose turns are in both stores (the workspace's store setting changed between them)", async () => {
    for (const flags of [[], ["--store", "shadow"], ["--store", "repo"]]) {
      const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
      await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
      r.write({ ".ghostcommit.json": JSON.stringify({ store: "repo" }) });
      await turn(r, "s", "2", () => r.write({ "b.txt": "b2\n" }));
      const rewound = r.cli(["rewind", "--session", "s", "--to", "1", ...flags, "--json"]);
      expect([flags, rewound.status, rewound.stderr]).toEqual([flags, 0, ""]);
      expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a0\n", "b0\n"]);
      r.ok("redo", "--session", "s", ...flags);
      expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a1\n", "b2\n"]);
    }
  });

  it("refuses with status 3, naming the files, when a person edited a file the agent changed; --force proceeds", async () => {
    const r = repo({ "a.txt": "0\n", "b.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "agent\n", "b.txt": "agent\n" }));
    r.write({ "a.txt": "person\n" });
    const before = (await listIn(r)).length;
    const refused = r.cli(["rewind", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.error.code).toBe("conflict");
    expect(refused.json.conflicts).toEqual(["a.txt"]);
    expect(refused.stderr).toMatch(/^ghostcommit: /);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["person\n", "agent\n"]);
    expect((await listIn(r)).length).toBe(before); // no safety snapshot either: nothing changed
    // A dry run is refused alike, and shows what --force would do, so one can decide on it.
    r.write({ "new.txt": "n\n" });
    await turn(r, "s", "2", () => r.write({ "made.txt": "m\n" }));
    const preview = r.cli(["rewind", "--to", "1", "--dry-run", "--json"]);
    expect([preview.status, preview.json.conflicts]).toEqual([3, ["a.txt"]]);
    expect(preview.json.forced).toEqual({ written: ["a.txt", "b.txt"], deleted: ["made.txt"] });
    expect(preview.stderr).toContain("forced, it would write 2 files (a.txt, b.txt) and delete 1 (made.txt)");
    expect((await listIn(r)).length).toBe(before + 2); // turn 2's two snapshots, nothing else
    expect(r.read("made.txt")).toBe("m\n");

    const forced = r.ok("rewind", "--to", "1", "--force");
    expect(forced.written.sort()).toEqual(["a.txt", "b.txt"]);
    expect(forced.deleted).toEqual(["made.txt"]);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["0\n", "0\n"]);
    // A redo's dry run refused alike shows its forced plan too.
    r.write({ "a.txt": "again\n" });
    const redoPreview = r.cli(["redo", "--dry-run", "--json"]);
    expect([redoPreview.status, redoPreview.json.conflicts]).toEqual([3, ["a.txt"]]);
    expect(redoPreview.json.forced).toEqual({ written: ["a.txt", "b.txt", "made.txt"], deleted: [] });
    r.write({ "a.txt": "0\n" });
    r.ok("redo"); // the person's edit is in the safety snapshot: redo brings it back
    expect(r.read("a.txt")).toBe("person\n");
  });

  it("refuses to rewind a session whose turn is still open (open-turn, status 3) unless forced", () => {
    const r = repo({ "f.txt": "0\n" });
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.write({ "f.txt": "writing\n", "half.txt": "h" });
    const refused = r.cli(["rewind", "--to", "1", "--json"]);
    expect([refused.status, refused.json.error.code]).toEqual([3, "open-turn"]);
    expect(refused.json.conflicts).toEqual([]); // as every refusal (status 3) has it
    expect(refused.stderr).toBe(
      "ghostcommit: session s has an open turn 1: the agent may still be writing; end the turn first, or use --force\n",
    );
    expect(refused.json.error.message).toBe(refused.stderr.slice("ghostcommit: ".length, -1));
    expect(r.read("f.txt")).toBe("writing\n");
    const forced = r.ok("rewind", "--to", "1", "--force");
    expect(forced.deleted).toEqual(["half.txt"]);
    expect(r.read("f.txt")).toBe("0\n");
    const log = r.ok("log");
    expect(log[0]).toMatchObject({ turn: "1", state: "rewound", changed: ["f.txt", "half.txt"] });
  });

  it("shows the plan on --dry-run, and needs --to when it cannot ask", async () => {
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }));
    const plan = r.ok("rewind", "--to", "1", "--dry-run");
    expect(plan).toMatchObject({ written: ["f.txt"], deleted: [], safety: null, dryRun: true });
    expect(r.read("f.txt")).toBe("1\n");
    const usage = r.cli(["rewind"]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/--to/);
    expect(r.cli(["rewind", "--to", "nope", "--json"]).json.error.code).toBe("not-found");
  });
});

describe("a rewind confirmed after its preview (library `expect`, as the web timeline sends it)", () => {
  it("is refused, changing nothing, when a turn ended or a file changed since the preview; the plan shown now rewinds", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "b.txt": "b2\n", "c.txt": "c2\n" }));
    const session = (await openIn(sandbox, r.dir)).session("s");
    const refusal = (expect: object) =>
      session.rewind({ to: "2", expect: expect as any }).then(
        () => null,
        (error) => ({ code: error.code, message: error.message }),
      );
    const shown = await session.rewind({ to: "2", dryRun: true });
    expect(shown).toMatchObject({ rewoundTurns: ["2"], written: [], deleted: ["b.txt", "c.txt"] });

    // The agent ends another turn before the user confirms.
    await turn(r, "s", "3", () => r.write({ "d.txt": "d3\n" }));
    expect(await refusal(shown)).toEqual({
      code: "plan-changed",
      message:
        "the rewind is no longer the one previewed: it would now rewind turns 2, 3, not turn 2; nothing was changed",
    });
    // Another window rewinds one of its files meanwhile: the rewind would now delete less.
    const again = await session.rewind({ to: "2", dryRun: true });
    r.ok("rewind", "--session", "s", "--to", "2", "c.txt");
    const snapshots = (await listIn(r)).length;
    expect(await refusal(again)).toEqual({
      code: "plan-changed",
      message:
        "the rewind is no longer the one previewed: it would now write or delete other files; nothing was changed",
    });
    expect([r.exists("b.txt"), r.exists("d.txt")]).toEqual([true, true]);
    // Nothing was changed: not even a safety snapshot of a rewind that did not happen is kept.
    expect((await listIn(r)).length).toBe(snapshots);
    expect((await logIn(r, "s")).map((t: any) => t.state)).toEqual(["done", "done", "done"]);
    expect(await refusal({ rewoundTurns: "2" })).toMatchObject({ code: "usage" });

    const now = await session.rewind({ to: "2", dryRun: true });
    const done = await session.rewind({ to: "2", expect: now });
    expect([done.rewoundTurns, done.deleted.sort()]).toEqual([
      ["2", "3"],
      ["b.txt", "d.txt"],
    ]);
    expect([r.exists("b.txt"), r.exists("d.txt"), r.read("a.txt")]).toEqual([false, false, "a1\n"]);
  });

  it("confirmed with force, is refused when a file the preview did not list as overridden changed since it", async () => {
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n", "new.txt": "n\n" }));
    r.write({ "f.txt": "1\nthe user's edit\n" });
    const session = (await openIn(sandbox, r.dir)).session("s");
    // "Rewind anyway" shows the forced dry run: f.txt would be overwritten, new.txt deleted.
    const shown = await session.rewind({ to: "1", force: true, dryRun: true });
    expect(shown).toMatchObject({ overridden: ["f.txt"], deleted: ["new.txt"] });
    // The person types into new.txt while reading it.
    r.write({ "new.txt": "n\ntyped after the preview\n" });
    const snapshots = (await listIn(r)).length;
    const refused = await session.rewind({ to: "1", force: true, expect: shown }).catch((error) => error);
    expect([refused.code, refused.message]).toEqual([
      "plan-changed",
      "the rewind is no longer the one previewed: it would now overwrite changes made since the turns to f.txt, new.txt; nothing was changed",
    ]);
    expect([r.read("f.txt"), r.read("new.txt")]).toEqual([
      "1\nthe user's edit\n",
      "n\ntyped after the preview\n",
    ]);
    expect((await listIn(r)).length).toBe(snapshots);
    // A preview without conflicts (its report leaves `overridden` out) expects none.
    const plain = { rewoundTurns: ["1"], written: ["f.txt"], deleted: ["new.txt"] };
    expect((await session.rewind({ to: "1", force: true, expect: plain }).catch((e) => e)).code).toBe(
      "plan-changed",
    );
    const now = await session.rewind({ to: "1", force: true, dryRun: true });
    // A file the preview listed, edited again before the confirmation: that edit was never shown.
    r.write({ "f.txt": "1\nthe user's edit\nand another\n" });
    const again = await session.rewind({ to: "1", force: true, expect: now }).catch((error) => error);
    expect([again.code, again.message]).toEqual([
      "plan-changed",
      "the rewind is no longer the one previewed: it would now overwrite f.txt, edited again since the preview; nothing was changed",
    ]);
    expect(r.read("f.txt")).toBe("1\nthe user's edit\nand another\n");
    const latest = await session.rewind({ to: "1", force: true, dryRun: true });
    const done = await session.rewind({ to: "1", force: true, expect: latest });
    expect(done.overridden).toEqual(["f.txt", "new.txt"]);
    expect([r.read("f.txt"), r.exists("new.txt")]).toEqual(["0\n", false]);
  });
});

describe("nextRedoPaths", () => {
  it("names the paths the next redo brings back after rewinds of chosen paths, and null for whole turns", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "b1\n" }));
    const session = (await openIn(sandbox, r.dir)).session("s");
    expect(await session.nextRedoPaths()).toBeNull();
    r.ok("rewind", "--session", "s", "--to", "1", "a.txt");
    r.ok("rewind", "--session", "s", "--to", "1", "b.txt");
    expect([await session.nextRedo(), await session.nextRedoPaths()]).toEqual([["1"], ["b.txt"]]);
    r.ok("redo", "--session", "s");
    expect(await session.nextRedoPaths()).toEqual(["a.txt"]);
    r.ok("redo", "--session", "s");
    r.ok("rewind", "--session", "s", "--to", "1");
    expect([await session.nextRedo(), await session.nextRedoPaths()]).toEqual([["1"], null]);
  });
});

describe("a redo confirmed after it was shown (library `expect`, as the web timeline sends it)", () => {
  it("is refused, changing nothing, when the last rewind is another one than the turns shown", async () => {
    const r = repo({ "a.txt": "a0\n" });
    for (const id of ["1", "2", "3"]) await turn(r, "s", id, () => r.write({ [`f${id}.txt`]: `${id}\n` }));
    const session = (await openIn(sandbox, r.dir)).session("s");
    expect(await session.nextRedo()).toBeNull();
    r.ok("rewind", "--session", "s", "--to", "3");
    const shown = { restoredTurns: (await session.nextRedo())! };
    expect(shown.restoredTurns).toEqual(["3"]);
    // Another window redoes that rewind and rewinds further back.
    r.ok("redo", "--session", "s");
    r.ok("rewind", "--session", "s", "--to", "2");
    const refused = await session.redo({ expect: shown, force: true }).catch((error) => error);
    expect([refused.code, refused.message]).toEqual([
      "plan-changed",
      "the redo is no longer the one shown: it would now bring back turns 2, 3, not turn 3; nothing was changed",
    ]);
    expect([r.exists("f2.txt"), r.exists("f3.txt")]).toEqual([false, false]);
    expect((await logIn(r, "s")).map((t: any) => t.state)).toEqual(["done", "rewound", "rewound"]);
    expect((await session.redo({ expect: { restoredTurns: "2" } as any }).catch((e) => e)).code).toBe(
      "usage",
    );

    const done = await session.redo({ expect: { restoredTurns: ["2", "3"] } });
    expect(done.restoredTurns).toEqual(["2", "3"]);
    expect([r.exists("f2.txt"), r.exists("f3.txt")]).toEqual([true, true]);
  });
});

describe("a forced redo confirmed after its refusal was shown (library `expect`)", () => {
  it("overwrites only the conflicts shown: a file edited after the refusal is refused, plan-changed, nothing changed", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "b1\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    r.write({ "a.txt": "a person's edit\n" });
    const session = (await openIn(sandbox, r.dir)).session("s");
    expect((await session.redo().catch((e) => e)).code).toBe("conflict");
    const plan = await session.redo({ force: true, dryRun: true });
    expect([plan.written, plan.overridden]).toEqual([["a.txt", "b.txt"], ["a.txt"]]);
    // "Redo anyway" was shown to overwrite a.txt; then the person edits b.txt.
    r.write({ "b.txt": "typed after the refusal\n" });
    const snapshots = (await listIn(r)).length;
    const expected = {
      restoredTurns: plan.restoredTurns,
      written: plan.written,
      deleted: plan.deleted,
      overridden: plan.overridden,
    };
    const refused = await session.redo({ force: true, expect: expected }).catch((e) => e);
    expect([refused.code, refused.message]).toEqual([
      "plan-changed",
      "the redo is no longer the one shown: it would now overwrite changes made since the rewind to a.txt, b.txt; nothing was changed",
    ]);
    // Only the turns, forced: `overridden` left out is none, so no conflict is overwritten unseen.
    const turnsOnly = await session.redo({ force: true, expect: { restoredTurns: ["1"] } }).catch((e) => e);
    expect(turnsOnly.code).toBe("plan-changed");
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a person's edit\n", "typed after the refusal\n"]);
    expect((await logIn(r, "s")).map((t: any) => t.state)).toEqual(["rewound"]);
    expect((await listIn(r)).length).toBe(snapshots);

    const shown = await session.redo({ force: true, dryRun: true });
    r.write({ "a.txt": "a person's edit, once more\n" }); // after it was shown
    const again = await session.redo({ force: true, expect: shown }).catch((e) => e);
    expect([again.code, again.message]).toEqual([
      "plan-changed",
      "the redo is no longer the one shown: it would now overwrite a.txt, edited again since the preview; nothing was changed",
    ]);
    expect(r.read("a.txt")).toBe("a person's edit, once more\n");
    const now = await session.redo({ force: true, dryRun: true });
    const done = await session.redo({ force: true, expect: { ...now, overridden: now.overridden } });
    expect(done.overridden).toEqual(["a.txt", "b.txt"]);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a1\n", "b1\n"]);
  });
});

describe("show of a rewind's safety snapshot", () => {
  it("names the session it guards and no made-up turn", async () => {
    const r = repo({ "a.txt": "a0\n" });
    await turn(r, "s-ign", "1", () => r.write({ "a.txt": "a1\n" }));
    const { safety } = r.ok("rewind", "--session", "s-ign", "--to", "1");
    const shown = r.cli(["show", safety]);
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout.split("\n").filter((l) => l.startsWith("session"))).toEqual(["session  s-ign"]);
    const turnAfter = (await listIn(r)).find((s: any) => s.kind === "turn-after");
    expect(r.cli(["show", turnAfter.id]).stdout).toContain("session  s-ign turn 1\n");
  });
});

describe("a turn named by the start of its id", () => {
  // Codex names each turn by its `turn_id`, a UUID-like string (the hook records it as the turn's
  // id): `--to` takes a unique start of it, as snapshot ids take a unique prefix.
  it("rewinds the one turn whose id starts so; refuses a start two turns share, and one under 4 characters", async () => {
    const r = repo({ "a.txt": "a0\n" });
    const first = "019a4c1e-8b2f-7c31-9d5e-2f6a7b8c9d0e";
    const second = "019a4c1f-0000-7000-8000-000000000002";
    await turn(r, "codex", first, () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "codex", second, () => r.write({ "b.txt": "b2\n" }));
    await turn(r, "codex", "019", () => r.write({ "c.txt": "c3\n" })); // an id that is a start of the others

    const shared = r.cli(["rewind", "--session", "codex", "--to", "019a4c1", "--json"]);
    expect([shared.status, shared.json.error.code]).toEqual([1, "ambiguous-id"]);
    expect(shared.stderr).toBe(
      `ghostcommit: turn 019a4c1 of session codex could be any of ${first}, ${second}: give more of its id\n`,
    );
    const short = r.cli(["rewind", "--session", "codex", "--to", "019a", "--json"]);
    expect([short.status, short.json.error.code]).toEqual([1, "ambiguous-id"]);
    expect(r.cli(["rewind", "--session", "codex", "--to", "01", "--json"]).json.error).toEqual({
      code: "not-found",
      message: "session codex has no turn 01",
    });
    expect([r.read("a.txt"), r.exists("b.txt"), r.exists("c.txt")]).toEqual(["a1\n", true, true]);

    // A whole id is never read as a start of another one.
    const exact = r.ok("rewind", "--session", "codex", "--to", "019");
    expect([exact.to, exact.rewoundTurns]).toEqual(["019", ["019"]]);
    const rewound = r.ok("rewind", "--session", "codex", "--to", "019a4c1f");
    expect([rewound.to, rewound.rewoundTurns]).toEqual([second, [second]]);
    expect([r.read("a.txt"), r.exists("b.txt"), r.exists("c.txt")]).toEqual(["a1\n", false, false]);
  });

  it("names a session by the start of its id too (Codex's and Claude Code's session ids are UUIDs)", async () => {
    const r = repo({ "a.txt": "a0\n" });
    const one = "0f3e1c2a-5b4d-4e6f-8a9b-0c1d2e3f4a5b";
    const two = "0f3e1c2b-0000-4000-8000-000000000000";
    await turn(r, one, "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, two, "1", () => r.write({ "b.txt": "b1\n" }));
    expect(r.ok("log", "--session", "0f3e1c2a").map((t: any) => t.changed)).toEqual([["a.txt"]]);
    const shared = r.cli(["rewind", "--session", "0f3e1c2", "--to", "1", "--json"]);
    expect([shared.status, shared.json.error]).toEqual([
      1,
      {
        code: "ambiguous-id",
        message: `session 0f3e1c2 could be any of ${two}, ${one}: give more of its id`, // the latest first
      },
    ]);
    const rewound = r.ok("rewind", "--session", "0f3e1c2b", "--to", "1");
    expect([rewound.session, rewound.rewoundTurns, r.exists("b.txt"), r.read("a.txt")]).toEqual([
      two,
      ["1"],
      false,
      "a1\n",
    ]);
    expect(r.ok("redo", "--session", "0f3e1c2b").restoredTurns).toEqual(["1"]);
  });
});
