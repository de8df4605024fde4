import path from "node:path";
import { describe, expect, it } from "vitest";
import { cacheTreeRoot } from "../../src/git/cache-tree.js";
import { indexExtensions } from "../../src/git/index-walk.js";
import { untrackedCacheIgnoreFileDirs } from "../../src/git/untracked-cache.js";
import { fileSandbox } from "../helpers/support.js";

const { repo } = fileSandbox();

/**
 * The untracked cache as git 2.39 writes it ("UNTR", index-format.txt), read back: the
 * directories it records a `.gitignore` in. A plain directory's snapshot trusts status's listing
 * only where none is outside a dependency directory.
 */
describe("git's untracked cache, read from the index", () => {
  const status = (r: ReturnType<typeof repo>, ...config: string[]) =>
    r.git(
      "-c",
      "core.untrackedCache=true",
      ...config.flatMap((c) => ["-c", c]),
      "status",
      "--porcelain=2",
      "--untracked-files=normal",
    );
  const cacheOf = (r: ReturnType<typeof repo>) => {
    const bodies = indexExtensions(path.join(r.dir, ".git/index"), new Set(["UNTR", "TREE"]));
    return { untr: bodies?.get("UNTR") ?? null, tree: bodies?.get("TREE") ?? null };
  };

  it("names the directories holding a .gitignore, with or without an end-of-entries record", () => {
    const r = repo({ "a/b/f.txt": "f\n", "c/g.txt": "g\n", "top.txt": "t\n" });
    // Over 127 directories (a count of two varint bytes), bitmaps of several words.
    for (let i = 0; i < 300; i++) r.write({ [`many/d${i % 150}/f${i}.txt`]: `${i}\n` });
    r.git("add", "-A");
    r.git("commit", "-q", "-m", "more");
    r.write({ "new/untracked.txt": "u\n" });
    status(r, "index.recordEndOfIndexEntries=true");
    const plain = cacheOf(r);
    expect(plain.untr).not.toBeNull();
    expect(untrackedCacheIgnoreFileDirs(plain.untr!)).toEqual([]);
    expect(cacheTreeRoot(plain.tree!)).toBe(r.git("rev-parse", "HEAD^{tree}").trim());

    // One that hides itself and its neighbours, deep in a directory git had cached.
    r.write({ "many/d17/.gitignore": "*\n" });
    r.write({ "many/d17/hidden.txt": "h\n" });
    expect(status(r, "index.recordEndOfIndexEntries=true")).not.toContain("hidden");
    expect(untrackedCacheIgnoreFileDirs(cacheOf(r).untr!)).toEqual(["many/d17"]);
    // Kept across a status that changes nothing, and read by walking the entries without EOIE.
    status(r, "index.recordEndOfIndexEntries=false");
    expect(untrackedCacheIgnoreFileDirs(cacheOf(r).untr!)).toEqual(["many/d17"]);
    // The top and a directory of the second word of the bitmap too (149 directories come first).
    r.write({ ".gitignore": "*.tmp\n", "many/d99/.gitignore": "x\n", "a/b/.gitignore": "y\n" });
    status(r, "index.recordEndOfIndexEntries=true");
    expect(untrackedCacheIgnoreFileDirs(cacheOf(r).untr!)).toEqual(["", "a/b", "many/d17", "many/d99"]);

    for (const file of [".gitignore", "many/d17/.gitignore", "many/d99/.gitignore", "a/b/.gitignore"])
      r.remove(file);
    status(r, "index.recordEndOfIndexEntries=true");
    // Git forgets a removed one only where it checks an untracked path against the rules: the
    // record can outlive the file (a/b and many/d99 hold tracked files only), never the reverse.
    const left = untrackedCacheIgnoreFileDirs(cacheOf(r).untr!)!;
    expect(["", "a/b", "many/d17", "many/d99"]).toEqual(expect.arrayContaining(left));
    status(r, "core.untrackedCache=false"); // dropped...
    status(r, "index.recordEndOfIndexEntries=true"); // ...and made again
    expect(untrackedCacheIgnoreFileDirs(cacheOf(r).untr!)).toEqual([]);
  });

  it("refuses a damaged cache rather than answering from it", () => {
    const r = repo({ "a/f.txt": "f\n" });
    for (let i = 0; i < 50; i++) r.write({ [`d${i}/g.txt`]: `${i}\n` });
    r.write({ "d3/.gitignore": "*.log\n" });
    status(r);
    const body = cacheOf(r).untr!;
    expect(untrackedCacheIgnoreFileDirs(body)).toEqual(["d3"]);
    for (let cut = 0; cut < body.length; cut++) {
      expect(untrackedCacheIgnoreFileDirs(body.subarray(0, cut))).toBeNull();
    }
    // A flipped bit: refused, or the same answer (a name's byte), never an exception.
    let refused = 0;
    for (let bit = 0; bit < body.length * 8; bit++) {
      const damaged = Buffer.from(body);
      damaged[bit >> 3] ^= 1 << (bit & 7);
      if (untrackedCacheIgnoreFileDirs(damaged) === null) refused++;
    }
    expect(refused).toBeGreaterThan(0);
  });
});
