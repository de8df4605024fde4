import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { indexSubtree } from "../../src/git/cache-tree.js";
import type { IndexSummary } from "../../src/git/index-entries.js";
import { indexEntriesDigest } from "../../src/git/index-file.js";
import { walkIndexFile } from "../../src/git/index-walk.js";
import { fileSandbox } from "../helpers/support.js";

const { repo, packedRepo, sandbox } = fileSandbox();

// Index entries hold a name's length in 12 bits: 4095 and above means "look for the NUL".
const LONG = `${"d".repeat(250)}/`.repeat(20) + "long-name.txt"; // 5033 bytes
const EDGE = `${"e".repeat(250)}/`.repeat(16) + "x".repeat(4095 - 251 * 16); // exactly 4095

/** Path → blob id, as git lists the index's stage-0 regular files. */
function gitListing(r: ReturnType<typeof repo>): Map<string, string> {
  const listed = new Map<string, string>();
  for (const line of r.git("ls-files", "-s", "-z").split("\0")) {
    const match = /^(100644|100755) ([0-9a-f]{40}) 0\t(.*)$/s.exec(line);
    if (match) listed.set(match[3], match[2]);
  }
  return listed;
}

/** Windows smaller than an entry, about one, a few and many entries wide, and the whole file. */
const WINDOWS = [16, 100, 1000, 64 * 1024, 256 * 1024, Number.MAX_SAFE_INTEGER];

/** The regular files of an index as walked from Node (the same through every window), by path. */
function walkedFiles(file: string): Map<string, { id: string; size: number }> | null {
  const walks = WINDOWS.map(
    (windowBytes) => walkIndexFile(file, { files: true, windowBytes })?.files ?? null,
  );
  for (const walk of walks) expect(walk).toEqual(walks[0]);
  const files = walks[0];
  if (files === null) return null;
  const positions = new Set(files.positions);
  const names = WINDOWS.map((windowBytes) => walkIndexFile(file, { namesAt: positions, windowBytes })?.names);
  for (const walk of names) expect(walk).toEqual(names[0]);
  const paths = names[0]!;
  expect(paths).toHaveLength(files.count);
  return new Map(
    paths.map((rel, i) => [
      rel,
      {
        id: files.ids.toString("hex", i * 20, i * 20 + 20),
        size: files.statSizes[i],
      },
    ]),
  );
}

/** Path → blob id of the regular files as read from Node. */
function visited(file: string): Map<string, string> | null {
  const files = walkedFiles(file);
  return files && new Map([...files].map(([rel, { id }]) => [rel, id]));
}

/** The recorded work-tree size of each regular file, by path. */
function recordedSizes(file: string): Map<string, number> {
  return new Map([...walkedFiles(file)!].map(([rel, { size }]) => [rel, size]));
}

/** What the base count wants of an index with these bytes: the same through every window. */
function summary(bytes: Buffer): IndexSummary | null {
  const file = `${sandbox.dir("indexes")}/${Math.random().toString(16).slice(2)}`;
  writeFileSync(file, bytes);
  const walks = WINDOWS.map((windowBytes) => walkIndexFile(file, { windowBytes })?.summary ?? null);
  for (const walk of walks) expect(walk).toEqual(walks[0]);
  return walks[0];
}

/** The digest of the entries a walk takes, the same through every window. */
function walkedDigest(file: string): string | null {
  const walks = WINDOWS.map(
    (windowBytes) => walkIndexFile(file, { digest: true, windowBytes })?.digest ?? null,
  );
  for (const walk of walks) expect(walk).toBe(walks[0]);
  return walks[0];
}

describe("reading the index from Node", () => {
  for (const version of ["2", "3", "4"]) {
    it(`index version ${version}: every entry is found, names of 4095 bytes and longer included`, () => {
      const r = repo({ "a.txt": "a\n", "z/after.txt": "after\n", "m/.gitattributes": "* text\n" });
      const blob = r.git("hash-object", "-w", "a.txt").trim();
      r.git("update-index", "--add", "--cacheinfo", `100644,${blob},${LONG}`);
      r.git("update-index", "--add", "--cacheinfo", `100644,${blob},${EDGE}`);
      // Neither a symlink nor a submodule is a file whose bytes git converts.
      r.git("update-index", "--add", "--cacheinfo", `120000,${blob},m/link`);
      r.git("update-index", "--add", "--cacheinfo", `160000,${r.git("rev-parse", "HEAD").trim()},m/sub`);
      r.git("update-index", "--index-version", version);
      const expected = gitListing(r);
      expect(expected.size).toBe(5);
      expect(expected.has(LONG) && expected.has(EDGE)).toBe(true);
      expect(visited(r.path(".git/index"))).toEqual(expected);
      // Entries written from files record their sizes; --cacheinfo ones record none.
      const sizes = recordedSizes(r.path(".git/index"));
      expect([sizes.get("a.txt"), sizes.get("z/after.txt"), sizes.get(LONG)]).toEqual([2, 6, 0]);
    });
  }

  it("an intent-to-add entry (extended flags) neither hides the entries after it nor counts", () => {
    const r = repo({ "a.txt": "a\n", "z/after.txt": "after\n" });
    r.write({ "b-new.txt": "new\n" });
    r.git("add", "-N", "b-new.txt");
    const seen = visited(r.path(".git/index"));
    expect(seen && [...seen.keys()].sort()).toEqual(["a.txt", "z/after.txt"]);
  });

  for (const version of ["2", "3", "4"]) {
    it(`index version ${version}: the cache tree's count, .gitattributes and .ghostignore files hold past a long name`, () => {
      const r = repo({
        ".ghostignore": "*.key\n",
        ".gitattributes": "* text=auto\n",
        "a.txt": "a\n",
        "z/.ghostignore": "*.pem\n",
        "z/.gitattributes": "* text\n",
        "z/deep/.ghostignore": "*.env\n",
        "z/deep/.gitattributes": "*.bin binary\n",
        "z/not.ghostignore": "x\n",
        "z/not.gitattributes": "x\n",
        "zz.gitattributes": "x\n",
      });
      const blob = r.git("hash-object", "-w", "a.txt").trim();
      r.git("update-index", "--add", "--cacheinfo", `100644,${blob},${LONG}`);
      r.git("update-index", "--index-version", version);
      const tree = r.git("write-tree").trim(); // makes the cache tree valid
      const index = () => readFileSync(r.path(".git/index"));
      // The top's own .ghostignore is read anyway: only those below it are listed.
      expect(indexSubtree(summary(index()), "")).toEqual({
        oid: tree,
        fileCount: 11,
        attributeFiles: [".gitattributes", "z/.gitattributes", "z/deep/.gitattributes"],
        ghostignoreFiles: ["z/.ghostignore", "z/deep/.ghostignore"],
      });
      expect(indexSubtree(summary(index()), "z")).toEqual({
        oid: r.git("rev-parse", `${tree}:z`).trim(),
        fileCount: 6,
        attributeFiles: [".gitattributes", "deep/.gitattributes"],
        ghostignoreFiles: ["deep/.ghostignore"],
      });
      // An entry in conflict, or a directory (a sparse index), where git's cache tree still says
      // it is valid (git itself invalidates it then; another tool's index may not): not trusted.
      for (const [at, bits] of [
        [60, 0x10], // the flags' stage bits: stage 1
        [26, 0x40], // the mode's type: 0o040000
      ]) {
        const bytes = index();
        bytes[12 + at] = at === 26 ? bits : bytes[12 + at] | bits; // the first entry, .ghostignore
        expect(indexSubtree(summary(bytes), "")).toBeNull();
      }
      // Real conflicts and intent-to-add entries: see test/capture/base-index.test.ts.
    });
  }

  it("an index carrying git's other extensions (untracked cache, end of entries) is walked past them", () => {
    const files: Record<string, string> = { ".gitattributes": "* text=auto\n" };
    for (let i = 0; i < 40; i++) files[`d${i % 4}/f${i}.txt`] = `${i}\n`;
    const r = repo(files);
    r.write({ "new/untracked.txt": "u\n" });
    r.git("config", "core.untrackedCache", "true");
    r.git("config", "index.recordEndOfIndexEntries", "true");
    r.git("update-index", "--untracked-cache");
    r.git("status", "--porcelain"); // writes the untracked cache
    const tree = r.git("write-tree").trim();
    const file = r.path(".git/index");
    const found = summary(readFileSync(file));
    expect([...(found?.extensions ?? [])].sort()).toEqual(["EOIE", "TREE", "UNTR"]);
    expect(indexSubtree(found, "")).toEqual({
      oid: tree,
      fileCount: 41,
      attributeFiles: [".gitattributes"],
      ghostignoreFiles: [],
    });
    expect(walkedFiles(file)?.size).toBe(41);
  });

  for (const version of ["2", "4"]) {
    it(`index version ${version}, damaged (cut short, a byte changed): the same answer through every window, or refused`, () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 300; i++) files[`${"p".repeat(i % 40)}/f${i}.txt`] = `${i}\n`;
      const r = repo(files);
      r.git("update-index", "--index-version", version);
      const good = readFileSync(r.path(".git/index"));
      let seed = 7;
      const next = (below: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % below;
      };
      const damaged: Buffer[] = [];
      for (let k = 0; k < 40; k++) damaged.push(good.subarray(0, next(good.length)));
      for (let k = 0; k < 40; k++) {
        const bytes = Buffer.from(good);
        bytes[next(bytes.length)] ^= 1 << next(8);
        damaged.push(bytes);
      }
      let refused = 0;
      for (const bytes of damaged) {
        const file = `${sandbox.dir("damaged")}/${Math.random().toString(16).slice(2)}`;
        writeFileSync(file, bytes);
        // summary() and walkedFiles() compare every window's answer with the whole file's.
        if (summary(bytes) === null) refused++;
        walkedFiles(file);
      }
      expect(refused).toBeGreaterThan(30); // every cut before the extensions, at least
    });
  }

  it("the entries' digest: the same from the file (where git recorded their end) as from a walk of its bytes", async () => {
    const r = repo({ "a.txt": "a\n", "b.txt": "b\n" });
    // Files as old as a minute: git smudges a "racily clean" entry (written within the index's
    // own second) whenever it writes the index, which would change the entries between rewrites.
    const past = new Date(Date.now() - 60_000);
    for (const rel of ["a.txt", "b.txt"]) utimesSync(r.path(rel), past, past);
    const walked = () => walkedDigest(r.path(".git/index"));
    r.git("config", "index.recordEndOfIndexEntries", "true");
    r.git("update-index", "--really-refresh");
    const recorded = await indexEntriesDigest(r.path(".git/index"));
    expect(recorded).toMatch(/^entries:/);
    expect(walked()).toBe(recorded);
    // Without the record the file's digest is its checksum; the walk still finds the entries'.
    r.git("config", "index.recordEndOfIndexEntries", "false");
    r.git("update-index", "--index-version", "3"); // rewrites it, same entries
    r.git("update-index", "--index-version", "2");
    expect(await indexEntriesDigest(r.path(".git/index"))).not.toMatch(/^entries:/);
    expect(walked()).toBe(recorded);
    // A cache extension changes neither; a new entry changes both.
    r.git("write-tree");
    expect(walked()).toBe(recorded);
    r.write({ "c.txt": "c\n" });
    r.git("add", "c.txt");
    expect(walked()).not.toBe(recorded);
  });

  for (const version of ["3", "4"]) {
    it(`index version ${version}: an index of 3,000 entries summed up through windows is the index read whole`, () => {
      // Entries cross every window's edge; some of them are .gitattributes files deep down.
      const files: Record<string, string> = {};
      for (let i = 0; i < 3000; i++)
        files[`${"n".repeat(90 + (i % 7))}/${String(i).padStart(6, "0")}.txt`] = `${i}\n`;
      const deep = [
        ".gitattributes",
        "n/.gitattributes",
        `${"q".repeat(200)}/${"r".repeat(200)}/.gitattributes`,
      ];
      for (const rel of deep) files[rel] = "* text\n";
      const r = packedRepo(files);
      r.git("update-index", "--index-version", version);
      const data = readFileSync(r.path(".git/index"));
      expect(data.length).toBeGreaterThan(2 * 64 * 1024); // version 4's names are compressed
      const found = summary(data);
      expect(found?.attributeFiles.sort()).toEqual([...deep].sort());
      expect(indexSubtree(found, "")?.fileCount).toBe(3003);
    });
  }

  it("the entries' digest of an index read in several chunks is the digest of all of them", async () => {
    // 3,000 entries with 100-byte names: ~500 KB of entries, read through a 256 KiB buffer.
    const files: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) files[`${"n".repeat(90)}/${String(i).padStart(6, "0")}.txt`] = `${i}\n`;
    const r = packedRepo(files);
    r.git("config", "index.recordEndOfIndexEntries", "true");
    r.git("update-index", "--index-version", "3"); // rewritten, now with the record
    expect(readFileSync(r.path(".git/index")).length).toBeGreaterThan(256 * 1024); // two chunks, the last one short
    expect(await indexEntriesDigest(r.path(".git/index"))).toBe(walkedDigest(r.path(".git/index")));
  });
});
