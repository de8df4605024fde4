import { describe, expect, test } from "vitest";
import { applyBudget, groupBudgetExclusions } from "../../src/capture/plain-budget.js";

const file = (path: string, mtimeMs: number, size = 10, forced = false) => ({ path, size, mtimeMs, forced });

describe("plain-directory budget", () => {
  test("keeps touched files first, then the most recently modified, within the file budget", () => {
    const result = applyBudget(
      [file("old", 1), file("new", 3), file("touched", 0, 10, true), file("mid", 2)],
      { files: 0, bytes: 0 },
      2,
      1_000,
    );
    expect(result.add.map((c) => c.path)).toEqual(["touched", "new"]);
    expect(result.dropped.map((c) => c.path)).toEqual(["mid", "old"]);
  });

  test("reports a directory holding nothing but left-out files as one entry with totals", () => {
    const dropped = [
      file("cache/a/1", 0, 5),
      file("cache/a/2", 0, 7),
      file("cache/b", 0, 1),
      file("src/old.txt", 0, 3),
    ];
    const entries = groupBudgetExclusions(dropped, ["src/main.txt", "notes.txt"]);
    expect(entries).toEqual([
      { path: "cache", reason: "budget", files: 3, bytes: 13 },
      { path: "src/old.txt", reason: "budget", files: 1, bytes: 3 },
    ]);
  });
});
