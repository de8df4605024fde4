import { utimesSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { applyBudget, groupBudgetExclusions } from "../../src/capture/plain-budget.js";
import { Repo } from "../helpers/repo.js";
import { fileSandbox } from "../helpers/support.js";

const file = (path: string, mtimeMs: number, size = 10, forced = false, captured = false) => ({
  path,
  size,
  mtimeMs,
  forced,
  captured,
});

const { sandbox } = fileSandbox();
let dirs = 0;
/** A plain directory (no git) with these settings, each file modified a second after the last. */
function plainDir(settings: object): { dir: Repo; write: (files: Record<string, string>) => void } {
  const dir = new Repo(sandbox, sandbox.dir(`plain-${++dirs}`));
  let at = Date.now() / 1000 - 3600;
  const write = (files: Record<string, string>) => {
    dir.write(files);
    for (const rel of Object.keys(files)) utimesSync(dir.path(rel), ++at, at);
  };
  write({ ".ghostcommit.json": JSON.stringify(settings) });
  return { dir, write };
}

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

  test("keeps files already captured before newer ones", () => {
    const result = applyBudget(
      [file("new", 3), file("edited", 1, 10, false, true)],
      { files: 1, bytes: 0 },
      2,
      1_000,
    );
    expect([result.add.map((c) => c.path), result.dropped.map((c) => c.path)]).toEqual([["edited"], ["new"]]);
  });

  test("a snapshot keeps every file it captured before, also one edited since, and leaves the new one out", () => {
    const { dir, write } = plainDir({ budgetFiles: 3 });
    write({ a: "a\n" });
    dir.ok("snapshot");
    write({ b: "b\n" });
    expect(dir.ok("snapshot").excluded).toEqual([]);
    write({ c: "c\n" }); // the newest, but past the budget
    expect(dir.ok("snapshot").excluded).toEqual([{ path: "c", reason: "budget", files: 1, bytes: 2 }]);
    write({ a: "a, edited\n" });
    write({ d: "d\n" });
    const snap = dir.ok("snapshot");
    expect(snap.excluded).toEqual([
      { path: "c", reason: "budget", files: 1, bytes: 2 },
      { path: "d", reason: "budget", files: 1, bytes: 2 },
    ]);
    expect(dir.ok("show", snap.id).files).toEqual([".ghostcommit.json", "a", "b"]);
    expect(dir.read("a")).toBe("a, edited\n");
  });

  test("a turn's edit of a captured file in a full directory is its change, and its rewind puts it back", () => {
    const { dir, write } = plainDir({ budgetFiles: 2 });
    write({ a: "a\n" });
    dir.ok("snapshot");
    dir.ok("turn", "begin", "--session", "s", "--turn", "1");
    write({ a: "a, edited\n" });
    write({ n: "new\n" });
    expect(dir.ok("turn", "end", "--session", "s", "--turn", "1").changed).toEqual(["a"]);
    const rewound = dir.ok("rewind", "--session", "s", "--to", "1");
    expect([rewound.written, rewound.skipped]).toEqual([["a"], [{ path: "n", reason: "excluded" }]]);
    expect(dir.read("a")).toBe("a\n");
  });

  test("the byte budget counts what is already captured, not only what one snapshot adds", () => {
    const { dir, write } = plainDir({ budgetBytes: 1000 });
    const kb = (c: string) => c.repeat(600);
    write({ f1: kb("1") });
    expect(dir.ok("snapshot").excluded).toEqual([]);
    for (const n of [2, 3, 4, 5]) {
      write({ [`f${n}`]: kb(String(n)) });
      const snap = dir.ok("snapshot");
      expect(snap.excluded.map((e: any) => [e.path, e.reason])).toEqual(
        [2, 3, 4, 5].filter((k) => k <= n).map((k) => [`f${k}`, "budget"]),
      );
    }
    // Edited, a captured file keeps its place: its old size is not counted beside its new one.
    write({ f1: kb("x") });
    expect(dir.ok("show", dir.ok("snapshot").id).files).toEqual([".ghostcommit.json", "f1"]);
    // Removed, it makes room for the newest.
    dir.remove("f1");
    const snap = dir.ok("snapshot");
    expect(dir.ok("show", snap.id).files).toEqual([".ghostcommit.json", "f5"]);
    expect(snap.excluded.map((e: any) => e.path)).toEqual(["f2", "f3", "f4"]);
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
