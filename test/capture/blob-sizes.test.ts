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
  SizeAnswers,
  sizeTableRecords,
  writeSizes,
} from "../../src/capture/blob-sizes.js";
import { OidTable } from "../../src/git/oid-table.js";
import type { StorePaths } from "../../src/store/layout.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "gc-sizes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the blob size table", () => {
  test("keeps every size byte for byte, past 32 bits and up to its 48-bit field", async () => {
    // Sizes at each byte boundary of the field; git's index keeps only 32 bits of a file's size.
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
      2 ** 48 - 1,
    ];
    const ids = sizes.map((_, i) => createHash("sha1").update(`blob ${i}`).digest());
    const index = Buffer.concat(ids); // item i's id at i × 20
    const known = Float64Array.from([...sizes, -1]); // one more item whose size is not known
    const file = path.join(dir, "blob-sizes.bin");
    await writeSizes(file, Buffer.concat([index, ids[0]]), known);
    const data = readFileSync(file);
    expect(isSizeTable(data)).toBe(true);

    const read = new Float64Array(sizes.length).fill(-1);
    applySizeTable(data, new OidTable(index), read);
    expect([...read]).toEqual(sizes);
  });

  test("a torn table reads as none", async () => {
    const file = path.join(dir, "torn.bin");
    const index = createHash("sha1").update("x").digest();
    await writeSizes(file, index, Float64Array.from([42]));
    const data = readFileSync(file);
    expect(isSizeTable(data.subarray(0, data.length - 1))).toBe(false);
    expect(isSizeTable(data)).toBe(true);
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
    expect(sizeTableRecords(data)).toBe(2);
    const read = new Float64Array(3).fill(-1);
    applySizeTable(data, new OidTable(index), read);
    expect([...read]).toEqual([10, 2 ** 40, -1]);

    const gone = path.join(dir, "gone.bin");
    await expect(appendSizes(gone, index, read, [0])).rejects.toThrow();
    expect(existsSync(gone)).toBe(false);
  });
});

describe("blob sizes asked of git", () => {
  test("answers come in the order asked, a line at a time however the output is cut", () => {
    const answers = new SizeAnswers(4);
    for (const chunk of ["12", "3\n", `${"f".repeat(40)} missing\n0`, "\n", "77\n"])
      answers.feed(Buffer.from(chunk));
    expect(answers.count).toBe(4);
    expect([0, 1, 2, 3, 4].map((k) => answers.sizeAt(k))).toEqual([123, -1, 0, 77, -1]);
    // A line more than asked is counted (so the caller trusts none), not kept.
    answers.feed(Buffer.from("5\n"));
    expect([answers.count, answers.sizeAt(4)]).toEqual([5, -1]);
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
    const sizes = new Float64Array(ids.length).fill(-1);
    sizes[0] = 999; // known already: not asked, not changed
    await askSizes(
      { dir: repo } as StorePaths,
      { ...env, GIT_DIR: path.join(repo, ".git") },
      index,
      [5, 3, 1, 2, 4],
      sizes,
    );
    expect([...sizes]).toEqual([999, 5, 70_000, 6, -1, 5]);

    // Many more than go in one write (the ids are written in chunks into one reused buffer).
    const many = Array.from({ length: 10_000 }, (_, k) => 1 + ((k * 7) % 5));
    const manyIndex = Buffer.concat(many.map((i) => ids[i]));
    const manySizes = new Float64Array(many.length).fill(-1);
    const everyItem = Int32Array.from(many.keys());
    await askSizes(
      { dir: repo } as StorePaths,
      { ...env, GIT_DIR: path.join(repo, ".git") },
      manyIndex,
      everyItem,
      manySizes,
    );
    expect([...manySizes]).toEqual(many.map((i) => [999, 5, 70_000, 6, -1, 5][i]));
  });
});
