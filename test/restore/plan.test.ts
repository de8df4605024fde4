import { describe, expect, it } from "vitest";
import { MODE } from "../../src/git/objects.js";
import { type PathChange, type PlanInput, planRestore, proveAbsent } from "../../src/restore/plan.js";

const f = (oid: string, mode: string = MODE.file) => ({ mode, oid: oid.padEnd(40, "0") });

function plan(changes: PathChange[], extra: Partial<PlanInput> = {}) {
  return planRestore({
    changes,
    provenAbsent: new Set(changes.filter((c) => !c.target).map((c) => c.path)),
    presentUncaptured: new Map(),
    untouchable: () => false,
    ...extra,
  });
}

describe("planRestore", () => {
  it("refuses a snapshot path outside the workspace (a forged or damaged snapshot) before any step", () => {
    for (const path of ["../x", "a/../../x", "/etc/x", "./x", "a//b"]) {
      expect(() => plan([{ path, current: null, target: f("1") }]), path).toThrow(
        expect.objectContaining({ code: "store-damaged" }),
      );
    }
  });

  it("writes differing paths, skips equal ones, deletes proven-absent ones deepest first", () => {
    const steps = plan([
      { path: "b.txt", current: f("1"), target: f("2") },
      { path: "same", current: f("3"), target: f("3") },
      { path: "mode", current: f("4"), target: f("4", MODE.exec) },
      { path: "x", current: f("5"), target: null },
      { path: "x2/deep/file", current: f("6"), target: null },
      { path: "a.txt", current: null, target: f("7") },
    ]);
    expect(steps).toEqual([
      { kind: "delete", path: "x2/deep/file" },
      { kind: "delete", path: "x" },
      { kind: "write", path: "a.txt", state: f("7") },
      { kind: "write", path: "b.txt", state: f("2") },
      { kind: "write", path: "mode", state: f("4", MODE.exec) },
    ]);
  });

  it("does not delete what the snapshot does not prove absent", () => {
    const steps = plan([{ path: "kept", current: f("1"), target: null }], { provenAbsent: new Set() });
    expect(steps).toEqual([{ kind: "skip", path: "kept", reason: "excluded" }]);
  });

  it("never overwrites a present file the safety snapshot does not hold", () => {
    const steps = plan([{ path: "ignored.env", current: null, target: f("1") }], {
      presentUncaptured: new Map([["ignored.env", null]]),
    });
    expect(steps).toEqual([{ kind: "skip", path: "ignored.env", reason: "excluded" }]);
  });

  it("skips .git paths and untouchable (.ghostignore) paths, and never enters submodules", () => {
    const steps = plan(
      [
        { path: "sub/.git/config", current: null, target: f("1") },
        { path: ".GIT/x", current: f("1"), target: null },
        { path: "private/key", current: f("1"), target: f("2") },
        { path: "module", current: f("1", MODE.gitlink), target: f("2", MODE.gitlink) },
        { path: "same-module", current: f("3", MODE.gitlink), target: f("3", MODE.gitlink) },
      ],
      { untouchable: (p) => p.startsWith("private/") },
    );
    // A submodule at another commit is said to be left as it is; one already there is not named.
    expect(steps).toEqual([
      { kind: "skip", path: "sub/.git/config", reason: "excluded" },
      { kind: "skip", path: ".GIT/x", reason: "excluded" },
      { kind: "skip", path: "private/key", reason: "excluded", detail: "ghostignore" },
      { kind: "skip", path: "module", reason: "excluded", detail: "submodule" },
    ]);
  });
});

describe("proveAbsent", () => {
  it("proves paths the target would have captured, not excluded, ignored or .git ones", () => {
    const proven = proveAbsent(
      ["new.txt", "node_modules/x/y.js", "build.log", "f/under-a-file", "big/a", ".git/HEAD", "bigger"],
      new Set(["f"]),
      ["node_modules", "big"],
      (p) => p.endsWith(".log"),
    );
    expect([...proven].sort()).toEqual(["bigger", "f/under-a-file", "new.txt"]);
  });

  it("a file in the target at an ancestor proves the path absent even below an excluded dir", () => {
    expect([...proveAbsent(["dist/a"], new Set(["dist"]), ["dist"], () => true)]).toEqual(["dist/a"]);
  });
});
