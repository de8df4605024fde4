import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/util/sha256.js";

// Store, journal and session directory names are these digests: a wrong one would lose a user's
// snapshots and sessions on upgrade, so it must be node:crypto's, byte for byte.
describe("sha256Hex", () => {
  it("is node:crypto's SHA-256 for every length across the padding's block edges", () => {
    for (let length = 0; length < 300; length++) {
      const data = Buffer.alloc(length);
      for (let i = 0; i < length; i++) data[i] = (i * 31 + length) & 255;
      expect(sha256Hex(data), `length ${length}`).toBe(createHash("sha256").update(data).digest("hex"));
    }
  });

  it("hashes a string as its UTF-8 bytes, as createHash().update(string) does", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    for (const text of ["", "héllo wörld ✓ 😀", "/home/a/proj\0/home/a/proj/.git", "x".repeat(1000)]) {
      expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
    }
  });
});
