import { describe, expect, it } from "vitest";
import { isoFromMicros } from "../../src/store/metadata.js";
import { isoFromMillis } from "../../src/util/format.js";

/** What isoFromMicros answered when it was toISOString with the microseconds put in. */
const expected = (t: number) =>
  new Date(Math.floor(t / 1000)).toISOString().replace("Z", `${String(t % 1000).padStart(3, "0")}Z`);

describe("isoFromMicros", () => {
  it("writes a time in microseconds as an ISO 8601 UTC time with six decimals", () => {
    expect(isoFromMicros(1764640000123456)).toBe("2025-12-02T01:46:40.123456Z");
    expect(isoFromMicros(0)).toBe("1970-01-01T00:00:00.000000Z");
    expect(isoFromMicros(951782400000001)).toBe("2000-02-29T00:00:00.000001Z"); // a leap day
    expect(isoFromMicros(253402300799000000)).toBe("9999-12-31T23:59:59.000000Z"); // a multiple of 32: exact
  });

  it("agrees with toISOString across years, month ends, midnights and every digit", () => {
    let t = 1;
    for (let i = 0; i < 5000; i++) {
      t = (t * 48271) % 2147483647;
      // Up to 2^53 microseconds (the year 2255), past which a number no longer holds each one.
      const micros = Math.floor((t / 2147483647) * 2 ** 53);
      expect(isoFromMicros(micros)).toBe(expected(micros));
    }
    for (const day of ["1999-12-31", "2024-02-29", "2100-02-28", "2026-06-30"]) {
      const midnight = Date.parse(`${day}T23:59:59.999Z`) * 1000 + 999;
      expect(isoFromMicros(midnight)).toBe(expected(midnight));
      expect(isoFromMicros(midnight + 1)).toBe(expected(midnight + 1));
    }
  });

  it("leaves times outside years 0–9999 to toISOString", () => {
    const far = 253402300800000000; // 10000-01-01
    expect(isoFromMicros(far)).toBe(expected(far));
    expect(() => isoFromMicros(Number.NaN)).toThrow(RangeError);
  });

  it("isoFromMillis is toISOString for any time a number of milliseconds holds", () => {
    let t = 7;
    for (let i = 0; i < 2000; i++) {
      t = (t * 48271) % 2147483647;
      const ms = Math.floor((t / 2147483647) * 253402300800000) - 62135596800000; // years 1–9999
      expect(isoFromMillis(ms)).toBe(new Date(ms).toISOString());
    }
    expect(isoFromMillis(-62167219200000)).toBe("0000-01-01T00:00:00.000Z");
    expect(isoFromMillis(-62167219200001)).toBe("-000001-12-31T23:59:59.999Z"); // toISOString's, before year 0
  });
});
