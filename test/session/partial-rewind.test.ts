import { describe, expect, it } from "vitest";
import { GhostcommitError } from "../../src/errors.js";
import { libTurn, openIn, sessionSandbox, turn } from "./support.js";
import { listIn } from "../helpers/in-process.js";

const { sandbox, repo } = sessionSandbox();

describe("rewind of chosen paths", () => {
  it("puts back only the named paths, keeps the turn done, shows them in log; redo and a later full rewind work", async () => {
    const r = repo({ ".gitignore": "*.log\n", "a.txt": "a0\n", "d/b.txt": "b0\n" });
    r.write({ "d/old.log": "ignored then\n" });
    await turn(r, "s", "1", () => {
      r.write({ "a.txt": "a1\n", "d/b.txt": "b1\n", "d/new.txt": "n1\n", ".gitignore": "# none\n" });
    });
    await turn(r, "s", "2", () => r.write({ "d/b.txt": "b2\n" }));

    const plan = r.cli(["rewind", "--to", "1", "--dry-run", "--json", "--", "d"]);
    expect(plan.json).toMatchObject({
      rewoundTurns: ["1", "2"],
      paths: ["d"],
      written: ["d/b.txt"],
      dryRun: true,
    });

    const report = r.ok("rewind", "--to", "1", "d");
    expect(report).toMatchObject({ written: ["d/b.txt"], deleted: ["d/new.txt"], paths: ["d"] });
    // d/old.log was ignored before turn 1: its absence then proves nothing, so it stays.
    expect([r.read("d/b.txt"), r.exists("d/new.txt"), r.read("d/old.log")]).toEqual([
      "b0\n",
      false,
      "ignored then\n",
    ]);
    expect([r.read("a.txt"), r.read(".gitignore")]).toEqual(["a1\n", "# none\n"]);
    const log = r.ok("log");
    expect(log.map((t: any) => [t.turn, t.state, t.rewoundPaths])).toEqual([
      ["1", "done", ["d/b.txt", "d/new.txt"]],
      ["2", "done", ["d/b.txt"]],
    ]);
    expect(r.cli(["log"]).stdout).toMatch(/rewound only: d\/b\.txt, d\/new\.txt/);

    const redo = r.ok("redo");
    expect(redo).toMatchObject({ restoredTurns: ["1", "2"], written: ["d/b.txt", "d/new.txt"] });
    expect([r.read("d/b.txt"), r.read("d/new.txt")]).toEqual(["b2\n", "n1\n"]);
    expect(r.ok("log").map((t: any) => t.rewoundPaths)).toEqual([undefined, undefined]);

    // Partial again, then the whole turns: the paths the partial rewind put back are no conflict.
    r.ok("rewind", "--to", "2", "d/b.txt");
    const full = r.ok("rewind", "--to", "1");
    expect(full.written.sort()).toEqual([".gitignore", "a.txt", "d/b.txt"]); // b1 (left by the partial rewind) to b0
    expect(full.deleted).toEqual(["d/new.txt"]);
    expect([r.read("a.txt"), r.read("d/b.txt"), r.exists("d/new.txt")]).toEqual(["a0\n", "b0\n", false]);
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["rewound", "rewound"]);
    // Rewound whole, no turn is "rewound only" in part; a redo brings the partial state back.
    expect(r.ok("log").map((t: any) => t.rewoundPaths)).toEqual([undefined, undefined]);
    expect(r.cli(["log"]).stdout).not.toContain("rewound only");
    r.ok("redo");
    expect(r.ok("log").map((t: any) => t.rewoundPaths)).toEqual([undefined, ["d/b.txt"]]);
  });

  it("still counts the files a partial rewind put back as the session's own after a new turn empties the redo history", async () => {
    const r = repo({ "a.txt": "base\n", "b.txt": "base\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "a2\n", "b.txt": "b2\n" }));
    r.ok("rewind", "--to", "2", "a.txt"); // a.txt back to a1, b.txt stays b2
    // An unrelated turn: the redo of the partial rewind is gone, its ownership of a.txt is not.
    await turn(r, "s", "3", () => r.write({ "c.txt": "c\n" }));
    expect(r.ok("log").map((t: any) => t.rewoundPaths)).toEqual([undefined, ["a.txt"], undefined]);
    const plan = r.cli(["rewind", "--to", "1", "--dry-run", "--json"]);
    expect(plan.status, plan.stderr).toBe(0);
    expect(plan.json).toMatchObject({ rewoundTurns: ["1", "2", "3"], written: ["a.txt", "b.txt"] });
    expect(plan.json.overridden).toBeUndefined();
    r.ok("rewind", "--to", "1");
    expect([r.read("a.txt"), r.read("b.txt"), r.exists("c.txt")]).toEqual(["base\n", "base\n", false]);
  });

  it("puts back a directory that the turn replaced by a file, naming a file below it", async () => {
    const r = repo({ "d/x.txt": "x\n", "d/y.txt": "y\n", "other.txt": "o\n" });
    await turn(r, "s", "1", () => {
      r.remove("d");
      r.write({ d: "a file now\n", "other.txt": "o1\n" });
    });
    const report = r.ok("rewind", "--to", "1", "d/x.txt");
    expect(report).toMatchObject({ written: ["d/x.txt"], deleted: ["d"] });
    expect([r.read("d/x.txt"), r.exists("d/y.txt"), r.read("other.txt")]).toEqual(["x\n", false, "o1\n"]);
    r.ok("redo");
    expect([r.read("d"), r.read("other.txt")]).toEqual(["a file now\n", "o1\n"]);
  });

  it("refuses named paths the turns never changed (usage, status 2), recording nothing for redo", async () => {
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n", "d/c.txt": "c0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "a2\n" }));
    r.ok("rewind", "--to", "2", "a.txt");
    const listed = (await listIn(r)).length;
    for (const args of [["b.txt"], ["a.txt", "d"], ["--dry-run", "b.txt"]]) {
      const result = r.cli(["rewind", "--to", "1", "--json", ...args]);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.json.error.code).toBe("usage");
    }
    expect(r.cli(["rewind", "--to", "1", "b.txt", "d"]).stderr).toBe(
      "ghostcommit: b.txt, d: not changed by turns 1, 2 of session s, so there is nothing to rewind there\n",
    );
    // Nothing was recorded: no safety snapshot, and one redo undoes the real rewind.
    expect((await listIn(r)).length).toBe(listed);
    expect(r.ok("redo").restoredTurns).toEqual(["2"]);
    expect(r.read("a.txt")).toBe("a2\n");
    // An open turn's changes count once seen (forced); the library refuses the same way.
    r.ok("turn", "begin", "--session", "s", "--turn", "3");
    r.write({ "b.txt": "b3\n" });
    expect(r.cli(["rewind", "--to", "2", "--force", "d/c.txt"]).status).toBe(2);
    expect(r.ok("rewind", "--to", "2", "--force", "b.txt").written).toEqual(["b.txt"]);
    const ws = await openIn(sandbox, r.dir);
    const refused = await ws
      .session("s")
      .rewind({ to: "1", paths: ["d/c.txt"] })
      .catch((error) => error);
    expect([refused.code, refused.message]).toEqual([
      "usage",
      "d/c.txt: not changed by turns 1, 2, 3 of session s, so there is nothing to rewind there",
    ]);
  });

  it("refuses a repeated rewind of paths already put back, recording nothing, so one redo brings them back", async () => {
    // An MCP client may retry the same rewind call; a person may run the command twice.
    const r = repo({ "a.txt": "a0\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "a1\n", "b.txt": "b1\n" }));
    await turn(r, "s", "2", () => r.write({ "a.txt": "a2\n" }));
    expect(r.ok("rewind", "--to", "1", "a.txt").written).toEqual(["a.txt"]);
    const listed = (await listIn(r)).length;
    for (const args of [["a.txt"], ["--dry-run", "a.txt"]]) {
      const again = r.cli(["rewind", "--to", "1", "--json", ...args]);
      expect([again.status, again.json.error.code], args.join(" ")).toEqual([1, "bad-input"]);
    }
    expect(r.cli(["rewind", "--to", "1", "a.txt"]).stderr).toBe(
      "ghostcommit: a.txt: already as before turn 1 of session s (an earlier rewind put it back, or a person did), so there is nothing to rewind; nothing was recorded\n",
    );
    expect((await listIn(r)).length).toBe(listed);
    // A path of the same turns not yet put back still rewinds beside it.
    expect(r.ok("rewind", "--to", "1", "a.txt", "b.txt").written).toEqual(["b.txt"]);
    r.ok("redo");
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a0\n", "b1\n"]);
    expect(r.ok("redo").written).toEqual(["a.txt"]);
    expect([r.read("a.txt"), r.read("b.txt")]).toEqual(["a2\n", "b1\n"]);
  });

  it("lists under skipped only the named paths it left, not a path outside them", async () => {
    const r = repo({ ".gitignore": ".env\n", "a.txt": "a0\n" });
    r.write({ ".env": "KEY=old\n" });
    const s = (await openIn(sandbox, r.dir)).session("s");
    await s.beginTurn("1");
    // Reported after the write (as Cursor's afterFileEdit is): its content before was never seen.
    r.write({ ".env": "KEY=agent\n", "a.txt": "a1\n" });
    await s.touched([".env"], { edited: true });
    await s.endTurn("1");
    const partial = r.ok("rewind", "--to", "1", "a.txt");
    expect([partial.written, partial.skipped]).toEqual([["a.txt"], []]);
    r.ok("redo");
    const whole = r.ok("rewind", "--to", "1");
    expect(whole.skipped).toEqual([{ path: ".env", reason: "not-captured" }]);
    expect(r.read(".env")).toBe("KEY=agent\n");
  });

  it("takes `paths` in the library's restore, diff and rewind options, relative to the workspace", async () => {
    const r = repo({ "a.txt": "a0\n", "d/b.txt": "b0\n" });
    const ws = await openIn(sandbox, r.dir);
    const snap = await ws.snapshot();
    await libTurn(ws, "lib", "1", () => r.write({ "a.txt": "a1\n", "d/b.txt": "b1\n", "d/c.txt": "c1\n" }));
    expect((await ws.diff(snap.id, undefined, { paths: ["d"] })).map((e) => e.path)).toEqual([
      "d/b.txt",
      "d/c.txt",
    ]);
    const plan = await ws.restore(snap.id, { paths: ["d/c.txt"], dryRun: true });
    expect([plan.written, plan.deleted]).toEqual([[], ["d/c.txt"]]);
    const rewound = await ws.session("lib").rewind({ to: "1", paths: ["a.txt"] });
    expect([rewound.paths, rewound.written, rewound.deleted]).toEqual([["a.txt"], ["a.txt"], []]);
    expect([r.read("a.txt"), r.read("d/b.txt")]).toEqual(["a0\n", "b1\n"]);
    const outside = await ws.restore(snap.id, { paths: ["../elsewhere"] }).catch((error) => error);
    expect(outside).toBeInstanceOf(GhostcommitError);
    expect(outside.code).toBe("usage");
  });
});
