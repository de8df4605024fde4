import ignore from "ignore";
import { describe, expect, it } from "vitest";
import {
  classifyUntracked,
  dependencyDirOf,
  ghostignoreMatch,
  largeDirCandidates,
  type UntrackedPolicyInput,
} from "../../src/capture/policy.js";
import { DEFAULT_SETTINGS } from "../../src/config.js";

const deps = new Set(DEFAULT_SETTINGS.dependencyDirs);
const many = (dir: string, n: number) => Array.from({ length: n }, (_, i) => `${dir}/f${i}`);

function classify(untracked: string[], extra: Partial<UntrackedPolicyInput> = {}) {
  return classifyUntracked({
    untracked,
    dependencyDirs: deps,
    largeDirFiles: 200,
    ghostignore: null,
    isTrackedDir: () => false,
    ...extra,
  });
}

describe("capture policy for untracked files", () => {
  it("excludes the outermost dependency dir with a file count; a file of that name is captured", () => {
    const result = classify([
      "node_modules/a/index.js",
      "node_modules/b.js",
      "web/.venv/x",
      "dist",
      "src/a.ts",
    ]);
    expect(result.capture).toEqual(["dist", "src/a.ts"]);
    expect(result.excluded).toEqual([
      { path: "node_modules", reason: "dependency-dir", files: 2 },
      { path: "web/.venv", reason: "dependency-dir", files: 1 },
    ]);
    expect(dependencyDirOf("a/node_modules/b/node_modules/c", deps)).toBe("a/node_modules");
    expect(dependencyDirOf("node_modules", deps)).toBeNull();
  });

  it("answers each path on its own, whatever came before (the last match is only a shortcut)", () => {
    const sequence: [string, string | null][] = [
      ["a/node_modules/x/y.js", "a/node_modules"],
      ["a/node_modules/z.js", "a/node_modules"],
      ["a/node_modules2/z.js", null],
      ["a/node_modules", null],
      ["a/node_modules/b/node_modules/c", "a/node_modules"],
      ["b/dist/a/target/x", "b/dist"],
      ["b/dist", null],
      ["b/distx/target/y", "b/distx/target"],
      ["a/node_modules/q", "a/node_modules"],
    ];
    for (const [rel, expected] of sequence) expect(dependencyDirOf(rel, deps)).toBe(expected);
  });

  it("reports nested repositories (git lists them as dir/) unless inside a dependency dir", () => {
    const result = classify(["vendor/lib/", "node_modules/pkg/", "a.txt"]);
    expect(result.capture).toEqual(["a.txt"]);
    expect(result.excluded).toEqual([
      { path: "vendor/lib", reason: "nested-repo" },
      { path: "node_modules", reason: "dependency-dir", files: 1 },
    ]);
  });

  it("excludes only the outermost large directory, counting files recursively", () => {
    const result = classify([...many("out/a", 150), ...many("out/b", 150), ...many("small", 200), "top.txt"]);
    expect(result.excluded).toEqual([{ path: "out", reason: "large-dir", files: 300 }]);
    expect(result.capture).toHaveLength(201);
  });

  it("never excludes the root, and skips directories that hold tracked files", () => {
    expect(classify(many("x", 1).concat(Array.from({ length: 300 }, (_, i) => `f${i}`))).excluded).toEqual(
      [],
    );
    const result = classify(many("src/gen", 201), { isTrackedDir: (d) => d === "src" });
    expect(result.excluded).toEqual([{ path: "src/gen", reason: "large-dir", files: 201 }]);
    const none = classify(many("src", 201), { isTrackedDir: (d) => d === "src" });
    expect(none.excluded).toEqual([]);
    expect(none.capture).toHaveLength(201);
  });

  it("counts only files not otherwise excluded towards a large directory, and not in plain directories", () => {
    const result = classify([...many("gen/node_modules", 300), ...many("gen", 10)]);
    expect(result.excluded).toEqual([{ path: "gen/node_modules", reason: "dependency-dir", files: 300 }]);
    expect(result.capture).toHaveLength(10);
    expect(classify(many("big", 500), { largeDirFiles: null }).excluded).toEqual([]);
    expect(largeDirCandidates(many("a/b", 3), 2)).toEqual(["a", "a/b"]);
  });

  it("applies .ghostignore (gitignore syntax) to files and directories", () => {
    const matcher = ignore().add("secrets/\n*.key\n!keep.key\n");
    const result = classify(
      ["secrets/a", "secrets/b/c", "x.key", "keep.key", "d/y.key", "ok.txt", "secrets/nested/"],
      {
        ghostignore: matcher,
      },
    );
    expect(result.capture).toEqual(["keep.key", "ok.txt"]);
    expect(result.excluded).toEqual(
      expect.arrayContaining([
        { path: "secrets", reason: "ignore-file", files: 3 },
        { path: "x.key", reason: "ignore-file" },
        { path: "d/y.key", reason: "ignore-file" },
      ]),
    );
    expect(ghostignoreMatch("secrets/deep/file", matcher)).toBe("secrets");
    expect(ghostignoreMatch("ok.txt", matcher)).toBeNull();
    expect(ghostignoreMatch("anything", null)).toBeNull();
  });
});
