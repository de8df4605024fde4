import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { ObjectCache } from "../../src/git/object-cache.js";
import { fileSandbox, filesOf } from "../helpers/support.js";
import { doctorIn } from "../helpers/in-process.js";

const { repo, sandbox } = fileSandbox();

function objectId(type: string, content: Buffer): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

describe("ObjectCache (trees and commits kept between captures)", () => {
  test("gives back what a run noted, hashes every object it hands out, and survives a torn file", () => {
    const file = path.join(sandbox.home, "object-cache.bin");
    const tree = Buffer.from("100644 a.txt\0aaaaaaaaaaaaaaaaaaaa");
    const commit = Buffer.from("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nmessage\n");
    const blob = Buffer.from("file content\n");
    const first = new ObjectCache(file);
    first.note(objectId("tree", tree), { type: "tree", content: tree });
    first.note(objectId("commit", commit), { type: "commit", content: commit });
    first.note(objectId("blob", blob), { type: "blob", content: blob }); // blobs are not kept
    writeFileSync(file, first.serialize()!);

    const second = new ObjectCache(file);
    expect(second.get(objectId("tree", tree))).toEqual({ type: "tree", content: tree });
    expect(second.get(objectId("commit", commit))).toEqual({ type: "commit", content: commit });
    expect(second.get(objectId("blob", blob))).toBeNull();
    expect(second.serialize()).toBeNull(); // the same objects: nothing to write

    // A flipped byte in the tree's body: that object misses, the commit is still served.
    const damaged = readFileSync(file);
    damaged[25 + 3] ^= 0x01;
    writeFileSync(file, damaged);
    const third = new ObjectCache(file);
    expect(third.get(objectId("tree", tree))).toBeNull();
    expect(third.get(objectId("commit", commit))).toEqual({ type: "commit", content: commit });

    // Cut in the middle of the second record: the first is kept.
    writeFileSync(file, readFileSync(file).subarray(0, 25 + tree.length + 10));
    expect(new ObjectCache(file).get(objectId("commit", commit))).toBeNull();
  });

  test("a later snapshot reads HEAD's trees from it without starting git cat-file; a damaged one changes nothing", async () => {
    const r = repo({ "src/deep/a.ts": "a\n", "src/b.ts": "b\n", "docs/c.md": "c\n" });
    r.write({ "src/deep/a.ts": "first edit\n" });
    r.ok("snapshot"); // reads HEAD's trees along src/deep, and keeps them
    const store = (await doctorIn(r)).store as string;
    const cacheFile = path.join(store, "object-cache.bin");
    r.write({ "src/deep/a.ts": "edited\n", "src/new.ts": "n\n" });
    const gitTrace = path.join(sandbox.home, "git-trace.txt");
    const cached = r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GIT_TRACE: gitTrace });
    expect(cached.status, cached.stderr).toBe(0);
    expect(readFileSync(gitTrace, "utf8")).not.toContain("cat-file");
    expect(await filesOf(r, cached.json.id)).toEqual([
      "docs/c.md",
      "src/b.ts",
      "src/deep/a.ts",
      "src/new.ts",
    ]);

    // Every byte after each record's head flipped: each object fails its hash, git is asked.
    const damaged = readFileSync(cacheFile);
    for (let i = 0; i < damaged.length; i++) damaged[i] ^= i % 7 === 3 ? 0x20 : 0;
    writeFileSync(cacheFile, damaged);
    const again = r.ok("snapshot");
    expect(again.id).not.toBe(cached.json.id); // a new snapshot (its own time and nonce) ...
    expect(r.ok("diff", cached.json.id, again.id)).toEqual([]); // ... of the same files
  });
});
