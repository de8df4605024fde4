import path from "node:path";
import { describe, expect, it } from "vitest";
import { GhostcommitError } from "../../src/errors.js";
import { libTurn, openIn, sessionSandbox } from "./support.js";

const { sandbox, repo, plain } = sessionSandbox();

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GhostcommitError) return error.code;
    throw error;
  }
  return "ok";
}

describe("rewind history through the library", () => {
  it("leaves a person's edits to other files alone", async () => {
    const r = repo({ "agent.txt": "0\n", "mine.txt": "0\n" });
    const ws = await openIn(sandbox, r.dir);
    await libTurn(ws, "s", "1", () => r.write({ "agent.txt": "agent\n", "made.txt": "x\n" }));
    r.write({ "mine.txt": "person\n", "notes.txt": "person\n" });
    const report = await ws.session("s").rewind({ to: "1" });
    expect([report.written, report.deleted]).toEqual([["agent.txt"], ["made.txt"]]);
    expect([r.read("agent.txt"), r.read("mine.txt"), r.read("notes.txt")]).toEqual([
      "0\n",
      "person\n",
      "person\n",
    ]);
  });

  it("undoes a move made in a turn", async () => {
    const r = repo({ "src/old.ts": "code\n" });
    const ws = await openIn(sandbox, r.dir);
    await libTurn(ws, "s", "1", () => {
      r.write({ "lib/new.ts": r.read("src/old.ts") });
      r.remove("src");
    });
    const report = await ws.session("s").rewind({ to: "1" });
    expect([report.written, report.deleted]).toEqual([["src/old.ts"], ["lib/new.ts"]]);
    expect([r.read("src/old.ts"), r.exists("lib")]).toEqual(["code\n", false]);
  });

  it("says of a rewound turn that redo cannot bring back once a turn began after its rewind", async () => {
    const r = repo({ "f.txt": "0\n" });
    const ws = await openIn(sandbox, r.dir);
    const s = ws.session("s");
    for (const n of ["1", "2"]) await libTurn(ws, "s", n, () => r.write({ "f.txt": `${n}\n` }));
    await s.rewind({ to: "2" });
    await libTurn(ws, "s", "3", () => r.write({ "g.txt": "3\n" }));
    await expect(s.rewind({ to: "2" })).rejects.toThrow(
      "turn 2 of session s is already rewound (a turn began after that rewind, so redo cannot bring it back)",
    );
    await expect(s.redo()).rejects.toThrow("no rewind to redo");
  });

  it("goes further back on a rewind after a rewind, and repeated redo walks forward one rewind at a time", async () => {
    const r = repo({ "f.txt": "0\n" });
    const ws = await openIn(sandbox, r.dir);
    const s = ws.session("s");
    for (const n of ["1", "2", "3"])
      await libTurn(ws, "s", n, () => r.write({ "f.txt": `${n}\n`, [`t${n}.txt`]: n }));
    expect((await s.rewind({ to: "3" })).rewoundTurns).toEqual(["3"]);
    expect(r.read("f.txt")).toBe("2\n");
    await expect(s.rewind({ to: "3" })).rejects.toThrow(
      "turn 3 of session s is already rewound (redo brings it back)",
    );
    expect((await s.rewind({ to: "2" })).rewoundTurns).toEqual(["2"]);
    expect([r.read("f.txt"), r.exists("t2.txt"), r.exists("t1.txt")]).toEqual(["1\n", false, true]);

    expect((await s.redo()).restoredTurns).toEqual(["2"]);
    expect([r.read("f.txt"), r.exists("t2.txt"), r.exists("t3.txt")]).toEqual(["2\n", true, false]);
    expect((await s.redo()).restoredTurns).toEqual(["3"]);
    expect([r.read("f.txt"), r.exists("t3.txt")]).toEqual(["3\n", true]);
    expect(await codeOf(s.redo())).toBe("nothing-to-redo");
  });

  it("discards redo when a new turn begins after a rewind, and a later rewind skips the rewound turns", async () => {
    const r = repo({ "f.txt": "0\n" });
    const ws = await openIn(sandbox, r.dir);
    const s = ws.session("s");
    await libTurn(ws, "s", "1", () => r.write({ "f.txt": "1\n" }));
    await libTurn(ws, "s", "2", () => r.write({ "f.txt": "2\n", "two.txt": "2" }));
    await s.rewind({ to: "2" });
    await libTurn(ws, "s", "3", () => r.write({ "three.txt": "3" }));
    expect(await codeOf(s.redo())).toBe("nothing-to-redo");
    expect((await s.log()).map((t) => `${t.turn}:${t.state}`)).toEqual(["1:done", "2:rewound", "3:done"]);
    expect((await s.rewind({ to: "1" })).rewoundTurns).toEqual(["1", "3"]);
    expect([r.read("f.txt"), r.exists("two.txt"), r.exists("three.txt")]).toEqual(["0\n", false, false]);
  });

  it("refuses redo over an edit made since the rewind, unless forced", async () => {
    const r = repo({ "f.txt": "0\n" });
    const ws = await openIn(sandbox, r.dir);
    const s = ws.session("s");
    await libTurn(ws, "s", "1", () => r.write({ "f.txt": "agent\n" }));
    await s.rewind({ to: "1" });
    r.write({ "f.txt": "person\n" });
    expect(await codeOf(s.redo())).toBe("conflict");
    expect(r.read("f.txt")).toBe("person\n");
    expect((await s.redo({ force: true })).written).toEqual(["f.txt"]);
    expect(r.read("f.txt")).toBe("agent\n");
  });

  it("works the same in a plain directory without git", async () => {
    const d = plain({ "a.txt": "0\n", ".gitignore": "a.txt\n" });
    const ws = await openIn(sandbox, d.dir);
    expect(ws.kind).toBe("plain");
    const s = ws.session("s");
    expect((await libTurn(ws, "s", "1", () => d.write({ "a.txt": "1\n", "b.txt": "b" }))).changed).toEqual([
      "a.txt",
      "b.txt",
    ]);
    await libTurn(ws, "s", "2", () => d.write({ "a.txt": "2\n" }));
    d.write({ "c.txt": "person" });
    expect((await s.rewind({ to: "1" })).rewoundTurns).toEqual(["1", "2"]);
    expect([d.read("a.txt"), d.exists("b.txt"), d.read("c.txt")]).toEqual(["0\n", false, "person"]);
    await s.redo();
    expect([d.read("a.txt"), d.read("b.txt")]).toEqual(["2\n", "b"]);
  });

  it("in a plain directory, a file a repository there ignores is rewound to what it held when touched", async () => {
    const d = plain({ "notes.txt": "n\n" });
    const fe = sandbox.repo(path.join(path.basename(d.dir), "fe"), {
      ".gitignore": "*.log\n",
      "a.js": "code\n",
    });
    fe.write({ "debug.log": "precious\n" });
    const ws = await openIn(sandbox, d.dir);
    const s = ws.session("s");
    await s.beginTurn("1", { prompt: "edit the log" });
    await s.touched(["fe/debug.log"]); // before the edit, as a pre-edit hook does
    fe.write({ "debug.log": "agent edit\n" });
    await s.endTurn("1");
    const report = await s.rewind({ to: "1" });
    expect([report.written, report.deleted]).toEqual([["fe/debug.log"], []]);
    expect(fe.read("debug.log")).toBe("precious\n");
  });
});
