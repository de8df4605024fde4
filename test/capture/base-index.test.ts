import { readFileSync, utimesSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Repo } from "../helpers/repo.js";
import { fileSandbox, filesOf } from "../helpers/support.js";

const { repo } = fileSandbox();

/**
 * A snapshot of the workspace at `dir` (a subdirectory makes a workspace of its own), with
 * tracing on: its JSON, and whether it listed the base tree (`git ls-tree -r`).
 */
function traced(r: Repo, dir = "."): { snap: any; listedTree: boolean } {
  const result = r.sandbox.cli(r.path(dir), ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
  expect(result.status, result.stderr).toBe(0);
  return { snap: result.json, listedTree: /git ls-tree -r/.test(result.stderr) };
}

/** The files `show` lists for the snapshot (read from its tree): what the count must match. */
function listed(r: Repo, dir: string, id: string): string[] {
  return r.sandbox.ok(r.path(dir), "show", id).files;
}

const TREE = {
  "README.md": "r\n",
  "src/a.ts": "a\n",
  "src/deep/b.ts": "b\n",
  "pkg/app/index.ts": "i\n",
  "pkg/app/lib/c.ts": "c\n",
  "pkg/app/lib/d.ts": "d\n",
  "pkg/other/e.ts": "e\n",
};

describe("the base tree's file count and .gitattributes, from the index's cache tree", () => {
  it("after a commit, the index's cache tree counts the files: the tree is not listed", () => {
    const r = repo(TREE);
    r.write({ "new.txt": "n\n", "src/a.ts": "edited\n" });
    r.remove("pkg/other/e.ts");
    const { snap, listedTree } = traced(r);
    expect(listedTree).toBe(false);
    expect(snap.fileCount).toBe(7); // 7 committed, one deleted, one new
    expect(listed(r, ".", snap.id)).toHaveLength(snap.fileCount);
  });

  it("a workspace in a subdirectory counts only its own part of the tree", () => {
    const r = repo(TREE);
    r.write({ "pkg/app/lib/new.ts": "n\n" });
    const { snap, listedTree } = traced(r, "pkg/app");
    expect(listedTree).toBe(false);
    expect(snap.fileCount).toBe(4);
    expect(listed(r, "pkg/app", snap.id).sort()).toEqual(["index.ts", "lib/c.ts", "lib/d.ts", "lib/new.ts"]);
  });

  it("finds .gitattributes below a subdirectory workspace: a CRLF file git calls clean comes back byte for byte", () => {
    const r = repo({
      ...TREE,
      "pkg/app/lib/.gitattributes": "*.txt text eol=lf\n",
      "pkg/app/lib/notes.txt": "one\ntwo\n",
    });
    // CRLF on disk, LF in the blob: git's clean step makes them equal, so git calls it clean.
    r.write({ "pkg/app/lib/notes.txt": "one\r\ntwo\r\n" });
    const past = new Date(Date.now() - 60_000);
    utimesSync(r.path("pkg/app/lib/notes.txt"), past, past);
    r.git("add", "pkg/app/lib/notes.txt");
    r.git("write-tree"); // (as a commit would) the index's cache tree holds HEAD's tree again
    expect(r.status()).toBe("");
    const { snap, listedTree } = traced(r, "pkg/app");
    expect(listedTree).toBe(false);
    expect(snap.fileCount).toBe(5);
    r.write({ "pkg/app/lib/notes.txt": "changed\n" });
    r.sandbox.ok(r.path("pkg/app"), "restore", snap.id);
    expect(readFileSync(r.path("pkg/app/lib/notes.txt"), "latin1")).toBe("one\r\ntwo\r\n");
  });

  it("a file merely named like one (foo.gitattributes) is not taken for attributes", () => {
    const r = repo({
      ...TREE,
      "foo.gitattributes": "* text eol=lf\n",
      "sub/x.gitattributes": "* text eol=lf\n",
    });
    const result = r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/git ls-tree -r/);
    // No attributes convert content here, so no clean file needs proving.
    expect(result.stderr).not.toMatch(/clean proof|tracked files to verify/);
    // The same tree with a real one does need it (what the assertion above would miss).
    const real = repo({ ...TREE, "sub/.gitattributes": "* text eol=lf\n" });
    const proved = real.sandbox.cli(real.dir, ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
    expect(proved.stderr).toMatch(/clean proof made from the whole index/);
  });

  it("an index version 4 (prefix-compressed names) is read the same way", () => {
    const r = repo(TREE);
    r.git("update-index", "--index-version", "4");
    r.write({ "pkg/app/new.ts": "n\n" });
    const { snap, listedTree } = traced(r, "pkg/app");
    expect(listedTree).toBe(false);
    expect(snap.fileCount).toBe(4);
  });

  // Each leaves the index's cache tree without HEAD's tree (or its count unlike the tree's):
  // the tree is listed instead, and the count still matches the snapshot's files.
  const FALLBACKS: [string, (r: Repo) => void][] = [
    [
      "a staged new file",
      (r) => {
        r.write({ "staged.ts": "s\n" });
        r.git("add", "staged.ts");
      },
    ],
    ["a staged deletion", (r) => r.git("rm", "-q", "--cached", "src/deep/b.ts")],
    [
      "an intent-to-add entry",
      (r) => {
        r.write({ "later.ts": "l\n" });
        r.git("add", "-N", "later.ts");
      },
    ],
    [
      "an intent-to-add entry deleted from disk (git gives it the empty blob as its HEAD id)",
      (r) => {
        r.write({ "gone.ts": "g\n" });
        r.git("add", "-N", "gone.ts");
        r.remove("gone.ts");
      },
    ],
    ["a split index", (r) => r.git("update-index", "--split-index")],
    [
      "a merge conflict",
      (r) => {
        r.git("checkout", "-q", "-b", "side");
        r.write({ "src/a.ts": "side\n" });
        r.git("commit", "-qam", "side");
        r.git("checkout", "-q", "main");
        r.write({ "src/a.ts": "main\n" });
        r.git("commit", "-qam", "main");
        try {
          r.git("merge", "-q", "side");
        } catch {
          // the conflict is the point
        }
      },
    ],
  ];
  for (const [what, setUp] of FALLBACKS) {
    it(`${what}: the tree is listed and the count is right`, async () => {
      const r = repo(TREE);
      setUp(r);
      const { snap, listedTree } = traced(r);
      expect(listedTree).toBe(true);
      expect(await filesOf(r, snap.id)).toHaveLength(snap.fileCount);
    });
  }
});
