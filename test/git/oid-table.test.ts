import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { OidTable } from "../../src/git/oid-table.js";

const id = (n: number) => createHash("sha1").update(`object ${n}`).digest();

/** Every item found for an id, in any order. */
function itemsOf(table: OidTable, first: number): number[] {
  const found: number[] = [];
  for (let position = first; position !== -1; position = table.nextWithSameId(position)) {
    found.push(table.itemAt(position));
  }
  return found.sort((a, b) => a - b);
}

describe("OidTable (ids found without making strings)", () => {
  // 5,000 items in one buffer; every tenth item repeats the id of the item before it (identical
  // files share a blob).
  const count = 5000;
  const ids = Array.from({ length: count }, (_, i) => (i % 10 === 9 ? id(i - 1) : id(i)));
  const table = new OidTable(Buffer.concat(ids));

  test("finds every item by its id, with all items that share an id", () => {
    for (let i = 0; i < count; i++) {
      const expected = i % 10 === 8 || i % 10 === 9 ? [i - (i % 10) + 8, i - (i % 10) + 9] : [i];
      expect(itemsOf(table, table.firstWithId(ids[i], 0))).toEqual(expected);
    }
  });

  test("ids it does not hold find nothing", () => {
    for (let i = count; i < count + 2000; i++) expect(table.firstWithId(id(i), 0)).toBe(-1);
    // Same first bytes (the bucket), different id: whole ids must be compared.
    const twin = Buffer.from(ids[0]);
    twin[19] ^= 0xff;
    expect(table.firstWithId(twin, 0)).toBe(-1);
  });
});
