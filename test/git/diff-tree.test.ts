import { describe, expect, it } from "vitest";
import { isAbsentMode, parseRawDiff, parseStdinDiff } from "../../src/git/diff-tree.js";

const A = "a".repeat(40);
const B = "b".repeat(40);
const Z = "0".repeat(40);
const rec = (...records: (string | Buffer)[]) =>
  Buffer.concat(
    records.flatMap((r) => [typeof r === "string" ? Buffer.from(r, "utf8") : r, Buffer.from([0])]),
  );

describe("parseRawDiff", () => {
  it("parses added, deleted, modified and type-changed records", () => {
    const out = rec(
      `:000000 100644 ${Z} ${A} A`,
      "added file",
      `:100644 000000 ${A} ${Z} D`,
      "dir/deleted",
      `:100644 100755 ${A} ${B} M`,
      "mode\nchange",
      `:100644 120000 ${A} ${B} T`,
      "link",
    );
    expect(parseRawDiff(out)).toEqual([
      { path: "added file", oldMode: "000000", newMode: "100644", oldOid: Z, newOid: A, status: "A" },
      { path: "dir/deleted", oldMode: "100644", newMode: "000000", oldOid: A, newOid: Z, status: "D" },
      { path: "mode\nchange", oldMode: "100644", newMode: "100755", oldOid: A, newOid: B, status: "M" },
      { path: "link", oldMode: "100644", newMode: "120000", oldOid: A, newOid: B, status: "T" },
    ]);
  });

  it("skips a leading commit id and keeps non-UTF-8 names as bytes", () => {
    const name = Buffer.from([0x66, 0xff, 0x2e, 0x63]);
    const out = rec(A, `:100644 100644 ${A} ${B} M`, name);
    const [change] = parseRawDiff(out);
    expect(Buffer.from(change.path, "latin1").equals(name)).toBe(true);
    expect(parseRawDiff(Buffer.alloc(0))).toEqual([]);
  });

  it("knows the all-zero mode means absent", () => {
    expect(isAbsentMode("000000")).toBe(true);
    expect(isAbsentMode("100644")).toBe(false);
  });
});

describe("parseStdinDiff", () => {
  it("takes the records after the line naming the two trees, and refuses an answer without it", () => {
    const records = rec(`:100644 100755 ${A} ${B} M`, "x");
    expect(parseStdinDiff(Buffer.concat([Buffer.from(`${A} ${B}\n`), records]), A, B)).toEqual(
      parseRawDiff(records),
    );
    expect(parseStdinDiff(Buffer.from(`${A} ${B}\n`), A, B)).toEqual([]);
    // Git skipped the line (a tree it could not read), or answered for other trees.
    expect(() => parseStdinDiff(Buffer.alloc(0), A, B, "error: bad object\n")).toThrow(
      /could not compare .*: error: bad object$/,
    );
    expect(() => parseStdinDiff(Buffer.concat([Buffer.from(`${B} ${A}\n`), records]), A, B)).toThrow(
      /could not compare/,
    );
  });
});
