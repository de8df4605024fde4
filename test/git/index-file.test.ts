import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { indexSubtree } from "../../src/git/cache-tree.js";
import { indexEntriesDigest, indexEntriesDigestOf, visitIndexFiles } from "../../src/git/index-file.js";
import { fileSandbox } from "../helpers/support.js";

const { repo } = fileSandbox();

// Index entries hold a name's length in 12 bits: 4095 and above means "look for the NUL".
const LONG = `${"d".repeat(250)}/`.repeat(20) + "long-name.txt"; // 5033 bytes
const EDGE = `${"e".repeat(250)}/`.repeat(16) + "x".repeat(4095 - 251 * 16); // exactly 4095

/** Path → blob id, as git lists the index's stage-0 files. */
function gitListing(r: ReturnType<typeof repo>): Map<string, string> {
  const listed = new Map<string, string>();
  for (const line of r.git("ls-files", "-s", "-z").split("\0")) {
    const match = /^(\d+) ([0-9a-f]{40}) 0\t(.*)$/s.exec(line);
    if (match && match[1] !== "160000") listed.set(match[3], match[2]);
  }
  return listed;
}

function visited(file: string): Map<string, string> | null {
  const seen = new Map<string, string>();
  const understood = visitIndexFiles(readFileSync(file), (entry) => seen.set(entry.path(), entry.oid()));
  return understood ? seen : null;
}

describe("reading the index from Node", () => {
  for (const version of ["2", "3", "4"]) {
    it(`index version ${version}: every entry is found, names of 4095 bytes and longer included`, () => {
      const r = repo({ "a.txt": "a\n", "z/after.txt": "after\n", "m/.gitattributes": "* text\n" });
      const blob = r.git("hash-object", "-w", "a.txt").trim();
      r.git("update-index", "--add", "--cacheinfo", `100644,${blob},${LONG}`);
      r.git("update-index", "--add", "--cacheinfo", `100644,${blob},${EDGE}`);
      r.git("update-index", "--index-version", version);
      const expected = gitListing(r);
      expect(expected.size).toBe(5);
      expect(expected.has(LONG) && expected.has(EDGE)).toBe(true);
      expect(visited(r.path(".git/index"))).toEqual(expected);
    });
  }

  it("an intent-to-add entry (extended flags) neither hides the entries after it nor counts", () => {
    const r = repo({ "a.txt": "a\n", "z/after.txt": "after\n" });
    r.write({ "b-new.txt": "new\n" });
    r.git("add", "-N", "b-new.txt");
    const seen = visited(r.path(".git/index"));
    expect(seen && [...seen.keys()].sort()).toEqual(["a.txt", "z/after.txt"]);
  });

  it("the cache tree's count and .gitattributes files hold past a long name", () => {
    const r = repo({ "a.txt": "a\n", "z/.gitattributes": "* text\n" });
    const blob = r.git("hash-object", "-w", "a.txt").trim();
    r.git("update-index", "--add", "--cacheinfo", `100644,${blob},${LONG}`);
    const tree = r.git("write-tree").trim(); // makes the cache tree valid
    const subtree = indexSubtree(readFileSync(r.path(".git/index")), "");
    expect(subtree).toEqual({ oid: tree, fileCount: 3, attributeFiles: ["z/.gitattributes"] });
  });

  it("the entries' digest is the same read from the file or from its bytes, and follows the entries only", async () => {
    const r = repo({ "a.txt": "a\n", "b.txt": "b\n" });
    for (const eoie of ["false", "true"]) {
      r.git("config", "index.recordEndOfIndexEntries", eoie);
      r.git("update-index", "--really-refresh"); // rewrites the index, with EOIE or without
      const file = r.path(".git/index");
      const digest = await indexEntriesDigest(file);
      expect(digest).not.toBeNull();
      expect(await indexEntriesDigestOf(readFileSync(file))).toBe(digest);
      expect(digest!.startsWith("entries:")).toBe(eoie === "true");
    }
    // With EOIE, a rewritten cache extension leaves it; a new entry changes it.
    const before = await indexEntriesDigest(r.path(".git/index"));
    r.git("write-tree"); // adds the cache tree extension
    expect(await indexEntriesDigest(r.path(".git/index"))).toBe(before);
    r.write({ "c.txt": "c\n" });
    r.git("add", "c.txt");
    expect(await indexEntriesDigestOf(readFileSync(r.path(".git/index")))).not.toBe(before);
  });
});
