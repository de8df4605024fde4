import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../src/integrations/jsonc.js";

describe("parseJsonc (settings files with comments, as Gemini CLI reads them)", () => {
  it("drops comments and trailing commas, never inside strings", () => {
    const text = `{
  // a note
  "a": "x // not a comment, /* nor this */",
  /* block
     comment */ "b": [1, 2, /* c */ ],
  "c": "ends with a comma and a brace ,}",
  "d": "quote \\" and backslash \\\\", // trailing
}`;
    expect(parseJsonc(text)).toEqual({
      a: "x // not a comment, /* nor this */",
      b: [1, 2],
      c: "ends with a comma and a brace ,}",
      d: 'quote " and backslash \\',
    });
    expect(parseJsonc('{"plain": true}')).toEqual({ plain: true });
  });

  it("throws on what is not JSON even so", () => {
    for (const bad of ["{", "{ /* open", "{a: 1}", "[1,,]"]) expect(() => parseJsonc(bad)).toThrow();
  });
});
