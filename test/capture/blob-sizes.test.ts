import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import {
  appendSizes,
  applySizeTable,
  askSizes,
  isSizeTable,
  ProvenSizes,
  SizeAnswers,
  sizeTableRecords,
  writeSizes,
} from "../../src/capture/blob-sizes.js";
import { OidTable } from "../../src/git/oid-table.js";
import type { StorePaths } from "../../src/store/layout.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "gc-sizes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sizes known so far for items whose files the index recorded with `statSizes`. */
function provenFor(statSizes: number[]): ProvenSizes {
  return new ProvenSizes(Uint32Array.from(statSizes));
}

describe("the blob size table", () => {
  test("keeps every size exactly, past 32 bits", async () => {
    // Sizes at each byte boundary; git's index keeps only 32 bits of a file's size.
    const sizes = [
      0,
      1,
      255,
      256,
      65_535,
      65_536,
      2 ** 24,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 32 + 1,
      2 ** 40 + 5,
      2 ** 48 + 3,
      2 ** 53 - 1,
    ];
    const ids = sizes.map((_, i) => createHash("sha1").update(`blob ${i}`).digest());
    const index = Buffer.concat(ids); // item i's id at i × 20
    const known = Float64Array.from([...sizes, -1]); // one more item whose size is not known
    const file = path.join(dir, "blob-sizes.bin");
    await writeSizes(file, Buffer.concat([index, ids[0]]), known);
    const data = readFileSync(file);
    expect(isSizeTable(data)).toBe(true);

    const read = provenFor(sizes.map((size) => size % 2 ** 32));
    applySizeTable(data, new OidTable(index), read);
    expect([...read.sizes]).toEqual(sizes);
    // Proven: a size the index recorded whole. At 2^32 and beyond the index's size wrapped.
    expect([...new Set(read.unproven)].sort((a, b) => a - b)).toEqual([9, 10, 11, 12, 13]);
  });

  test("a torn table, or one of the earlier format, reads as none", async () => {
    const file = path.join(dir, "torn.bin");
    const index = createHash("sha1").update("x").digest();
    await writeSizes(file, index, Float64Array.from([42]));
    const data = readFileSync(file);
    expect(isSizeTable(data.subarray(0, data.length - 1))).toBe(false);
    expect(isSizeTable(Buffer.concat([data, Buffer.alloc(7)]))).toBe(false);
    expect(isSizeTable(data)).toBe(true);
    // Version 1: a 26-byte record per blob (its id, then its size in 48 bits).
    const earlier = Buffer.concat([
      Buffer.from("ghostcommit blob sizes 1\n"),
      index,
      Buffer.from([0, 0, 0, 0, 0, 42]),
    ]);
    expect(isSizeTable(earlier)).toBe(false);
  });

  test("sizes added at its end are read with the others; a table that is gone is not made again", async () => {
    const ids = [0, 1, 2].map((i) => createHash("sha1").update(`appended ${i}`).digest());
    const index = Buffer.concat(ids);
    const file = path.join(dir, "appended.bin");
    await writeSizes(file, index, Float64Array.from([10, -1, -1]));
    // The second blob's size was asked of git; the third's is still unknown.
    await appendSizes(file, index, Float64Array.from([10, 2 ** 40, -1]), [1, 2]);
    const data = readFileSync(file);
    expect(isSizeTable(data)).toBe(true);
    expect(sizeTableRecords(data)).toBe(5);
    const read = provenFor([10, 7, 0]);
    applySizeTable(data, new OidTable(index), read);
    expect([...read.sizes]).toEqual([10, 2 ** 40, -1]);
    expect(read.unproven).toEqual([1]); // the third is not known yet: neither proven nor not

    const gone = path.join(dir, "gone.bin");
    await expect(appendSizes(gone, index, read.sizes, [0])).rejects.toThrow();
    expect(existsSync(gone)).toBe(false);
  });
});

describe("blob sizes asked of git", () => {
  test("answers land in the order asked, a line at a time however the output is cut", () => {
    const proof = provenFor([123, 5, 1, 77]);
    const answers = new SizeAnswers(proof, null, 4);
    for (const chunk of ["12", "3\n", `${"f".repeat(40)} missing\n0`, "\n", "77\n"])
      answers.feed(Buffer.from(chunk));
    expect(answers.count).toBe(4);
    expect([...proof.sizes]).toEqual([123, -1, 0, 77]);
    expect(proof.unproven).toEqual([1, 2]); // one missing, one of another size
    // A line more than asked is counted (so the caller trusts none), not landed.
    answers.feed(Buffer.from("5\n"));
    expect(answers.count).toBe(5);
    expect([...proof.sizes]).toEqual([123, -1, 0, 77]);
    proof.distrust(null);
    expect([...proof.sizes]).toEqual([-1, -1, -1, -1]);
    expect([...new Set(proof.unproven)].sort()).toEqual([0, 1, 2, 3]);
  });

  test("git's sizes land on the items asked, in any order; an object git lacks stays unknown", async () => {
    const repo = path.join(dir, "repo");
    const env = { GIT_CONFIG_GLOBAL: path.join(dir, "gitconfig"), GIT_CONFIG_NOSYSTEM: "1" };
    writeFileSync(env.GIT_CONFIG_GLOBAL, "");
    execFileSync("git", ["init", "-q", repo], { env: { ...process.env, ...env } });
    const contents = ["", "hello", "x".repeat(70_000), "line\r\n"];
    const ids = contents.map((content) => {
      const file = path.join(dir, "content");
      writeFileSync(file, content);
      const hex = execFileSync("git", ["-C", repo, "hash-object", "-w", file], {
        env: { ...process.env, ...env },
      });
      return Buffer.from(hex.toString().trim(), "hex");
    });
    ids.push(createHash("sha1").update("not in the repository").digest());
    ids.push(ids[1]); // two files with the same content
    const index = Buffer.concat(ids);
    const proof = provenFor([999, 0, 5, 70_000, 6, 5]);
    proof.land(0, 999); // known already: not asked, not changed
    await askSizes(
      { dir: repo } as StorePaths,
      { ...env, GIT_DIR: path.join(repo, ".git") },
      index,
      [5, 3, 1, 2, 4],
      proof,
    );
    expect([...proof.sizes]).toEqual([999, 5, 70_000, 6, -1, 5]);
    // Items 1 to 3 were recorded with other sizes than their blobs'; git lacks item 4's blob.
    expect([...new Set(proof.unproven)].sort()).toEqual([1, 2, 3, 4]);

    // Many more than go in one write (the ids are written in chunks into one reused buffer).
    const many = Array.from({ length: 10_000 }, (_, k) => 1 + ((k * 7) % 5));
    const manyIndex = Buffer.concat(many.map((i) => ids[i]));
    const expected = many.map((i) => [999, 5, 70_000, 6, -1, 5][i]);
    const manySizes = provenFor(expected.map((size) => Math.max(size, 0)));
    await askSizes(
      { dir: repo } as StorePaths,
      { ...env, GIT_DIR: path.join(repo, ".git") },
      manyIndex,
      null, // every item
      manySizes,
    );
    expect([...manySizes.sizes]).toEqual(expected);
    // Only the items whose blob git lacks are left unproven.
    expect(manySizes.unproven).toEqual(many.flatMap((i, k) => (i === 4 ? [k] : [])));
  });
});
