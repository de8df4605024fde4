import { describe, expect, it } from "vitest";
import { attributeTurn, overlappingTouches } from "../../src/session/attribution.js";
import { parseJournal } from "../../src/session/journal.js";
import { foldJournal, type JournalRecord } from "../../src/session/model.js";
import { attributePaths, changesOf, conflictsOf } from "../../src/session/rewind-plan.js";
import { promptPreview } from "../../src/util/format.js";

const A = { mode: "100644", oid: "a".repeat(40) };
const B = { mode: "100644", oid: "b".repeat(40) };

function turnRecords(id: string, t: number, changed: string[]): JournalRecord[] {
  return [
    { e: "begin", turn: id, prompt: `p${id}`, before: `b${id}`, t },
    { e: "end", turn: id, after: `a${id}`, changed, t: t + 1 },
  ];
}

function rewind(id: string, turns: string[], t: number): JournalRecord {
  return { e: "rewind", id, to: turns[0], turns, safety: `s${id}`, written: [], deleted: [], t };
}

describe("the session journal", () => {
  it("keeps the turns of a rewind of some paths done, records what it put back, and redo forgets it", () => {
    const partial: JournalRecord = {
      e: "rewind",
      id: "p1",
      to: "1",
      turns: ["1", "2"],
      safety: "sp1",
      written: [["d/x", A.mode, A.oid]],
      deleted: ["d/y"],
      paths: ["d"],
      t: 30,
    };
    const records = [
      ...turnRecords("1", 10, ["a", "d/x", "d/y"]),
      ...turnRecords("2", 20, ["d/x", "e"]),
      partial,
    ];
    let state = foldJournal("s", records);
    expect(state.turns.map((t) => [t.state, [...t.rewoundPaths.values()]])).toEqual([
      ["done", [["d/x", "d/y"]]],
      ["done", [["d/x"]]],
    ]);
    expect(state.turns.filter((t) => t.state !== "rewound")).toHaveLength(2);
    state = foldJournal("s", [...records, { e: "redo", rewind: "p1", safety: "x", t: 40 }]);
    expect(state.turns.map((t) => [t.state, t.rewoundPaths.size])).toEqual([
      ["done", 0],
      ["done", 0],
    ]);
    // A forced rewind of some paths closes the open turn: it ends up done, not open.
    const open: JournalRecord[] = [{ e: "begin", turn: "3", prompt: "", before: "b3", t: 50 }];
    const closing: JournalRecord = {
      ...partial,
      id: "p2",
      turns: ["3"],
      closed: { turn: "3", changed: ["d/x"] },
      t: 60,
    };
    state = foldJournal("s", [...records, ...open, closing]);
    expect(state.turns.map((t) => t.state)).toEqual(["done", "done", "done"]);
  });

  it("skips a torn last line and a damaged middle line instead of failing", () => {
    const good = JSON.stringify({ e: "begin", turn: "1", prompt: "", before: "x", t: 1 });
    const { records, torn } = parseJournal(`${good}\n{"e":"end","tu\n${good}\n{"e":"end","turn":"1","af`);
    expect(records).toHaveLength(2);
    expect(torn).toBe(true);
    expect(parseJournal(`${good}\n`).torn).toBe(false);
  });

  it("does not trust a record naming a path outside the workspace (a forged journal): the fold never sees it", () => {
    const begin = { e: "begin", turn: "1", prompt: "", before: "x", t: 1 };
    const end = (changed: unknown) => ({ e: "end", turn: "1", after: "y", changed, t: 2 });
    const forged = [
      end(["../victim.txt"]),
      end(["/etc/passwd"]),
      end(["a/./b"]),
      end("f.txt"),
      { e: "touch", turn: "1", paths: ["f.txt"], files: ["f.txt", "x/../../y"], t: 2 },
      {
        e: "rewind",
        id: "r",
        to: "x",
        turns: ["1"],
        safety: "z",
        written: [["../w", "100644", "o"]],
        deleted: [],
        t: 3,
      },
      {
        e: "rewind",
        id: "r",
        to: "x",
        turns: ["1"],
        safety: "z",
        written: [],
        deleted: [],
        closed: { turn: "1", changed: ["a\u0000b"] },
        t: 3,
      },
    ];
    for (const record of forged) {
      const { records, untrusted } = parseJournal(`${JSON.stringify(begin)}\n${JSON.stringify(record)}\n`);
      expect(untrusted, JSON.stringify(record)).toBe(1);
      expect(records).toEqual([begin]);
    }
    // A touch of the whole workspace names its root ("") and is trusted.
    const root = { e: "touch", turn: "1", paths: [""], files: ["f.txt"], t: 2 };
    expect(parseJournal(`${JSON.stringify(begin)}\n${JSON.stringify(root)}\n`).records).toHaveLength(2);
  });

  it("folds turns into open, done and rewound, and redo marks them done again", () => {
    const records = [...turnRecords("1", 10, ["a"]), ...turnRecords("2", 20, ["b"]), rewind("r1", ["2"], 30)];
    let state = foldJournal("s", records);
    expect(state.turns.map((t) => t.state)).toEqual(["done", "rewound"]);
    expect(state.redoStack.map((r) => r.id)).toEqual(["r1"]);
    state = foldJournal("s", [...records, { e: "redo", rewind: "r1", safety: "x", t: 40 }]);
    expect(state.turns.map((t) => t.state)).toEqual(["done", "done"]);
    expect(state.redoStack).toEqual([]);
  });

  it("keeps a stack of rewinds so repeated redo walks back through them", () => {
    const records = [
      ...turnRecords("1", 10, []),
      ...turnRecords("2", 20, []),
      ...turnRecords("3", 30, []),
      rewind("r1", ["3"], 40),
      rewind("r2", ["2"], 50),
      { e: "redo", rewind: "r2", safety: "x", t: 60 } as JournalRecord,
    ];
    const state = foldJournal("s", records);
    expect(state.turns.map((t) => t.state)).toEqual(["done", "done", "rewound"]);
    expect(state.redoStack.map((r) => r.id)).toEqual(["r1"]);
    expect(state.turns.filter((t) => t.state !== "rewound").map((t) => t.turn)).toEqual(["1", "2"]);
  });

  it("discards the redo stack when a new turn begins after a rewind, and lets it reuse a rewound id", () => {
    const records = [...turnRecords("1", 10, []), ...turnRecords("2", 20, []), rewind("r1", ["2"], 30)];
    const state = foldJournal("s", [
      ...records,
      { e: "begin", turn: "2", prompt: "again", before: "b", t: 40 },
    ]);
    expect(state.redoStack).toEqual([]);
    expect(state.turns.map((t) => [t.turn, t.state, t.prompt])).toEqual([
      ["1", "done", "p1"],
      ["2", "open", "again"],
    ]);
  });

  it("attributes touches to the open turn and replaces its before-state when a touch captured one", () => {
    const state = foldJournal("s", [
      { e: "begin", turn: "1", prompt: "", before: "old", t: 1 },
      { e: "touch", turn: "1", paths: [".env"], files: [".env"], before: "new", absent: ["gone"], t: 2 },
      { e: "touch", turn: null, paths: ["x"], files: ["x"], t: 3 },
    ]);
    expect(state.turns[0].before).toBe("new");
    expect([...state.turns[0].touched]).toEqual([".env"]);
    expect([...state.turns[0].beforeAbsent]).toEqual(["gone"]);
    expect([...state.touched]).toEqual([".env", "x"]);
  });

  it("keeps prompt previews to one short line", () => {
    expect(promptPreview("fix\n  the   bug")).toBe("fix the bug");
    expect(promptPreview("x".repeat(300))).toHaveLength(200);
  });
});

describe("attribution", () => {
  it("counts a turn's diff and its touches, but not paths only an overlapping session touched", () => {
    expect(attributeTurn(["a", "b", "c"], new Set(["d", "c"]), new Set(["b", "c"]))).toEqual(["a", "c", "d"]);
  });

  it("sees touches of other sessions' turns that overlap in time only", () => {
    const other = foldJournal("o", [
      { e: "begin", turn: "early", prompt: "", before: "x", t: 1 },
      { e: "touch", turn: "early", paths: ["e"], files: ["e"], t: 2 },
      { e: "end", turn: "early", after: "y", changed: ["e"], t: 3 },
      { e: "begin", turn: "during", prompt: "", before: "x", t: 15 },
      { e: "touch", turn: "during", paths: ["d"], files: ["d"], t: 16 },
    ]);
    expect([...overlappingTouches([other], 10, 20)]).toEqual(["d"]);
  });
});

describe("rewind planning", () => {
  it("takes each path's target from the first rewound turn that changed it and its check from the last", () => {
    const spans = attributePaths([{ changed: ["a", "b"] }, { changed: [] }, { changed: ["b", "c"] }]);
    expect(Object.fromEntries(spans)).toEqual({
      a: { first: 0, last: 0 },
      b: { first: 0, last: 2 },
      c: { first: 2, last: 2 },
    });
  });

  it("flags a path whose current state is not what the session left, unless that is unknown", () => {
    const states = [
      { path: "same", current: A, target: null, expected: A },
      { path: "edited", current: B, target: null, expected: A },
      { path: "deleted", current: null, target: A, expected: B },
      { path: "open-turn", current: B, target: A, expected: undefined },
    ];
    expect(conflictsOf(states)).toEqual(["deleted", "edited"]);
    expect(changesOf(states).map((c) => c.path)).toEqual(["same", "edited", "deleted", "open-turn"]);
    expect(changesOf([{ path: "x", current: A, target: A, expected: A }])).toEqual([]);
  });
});
