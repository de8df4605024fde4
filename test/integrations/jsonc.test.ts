import { describe, expect, it } from "vitest";
import { addMember, layoutOf, removeMember } from "../../src/integrations/json-edit.js";
import { parseJsonc, parseJsoncTree } from "../../src/integrations/jsonc.js";

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

describe("member edits (what install and uninstall change in a settings file's text)", () => {
  const remove = (text: string, index: number) => removeMember(text, parseJsoncTree(text), index);

  it("removes a member without breaking the comments around it, or their lines", () => {
    expect(remove("[1,\n 2, // two\n 3]", 2)).toBe("[1,\n 2 // two\n ]");
    expect(remove("[1, // c\n  2,\n  3]", 1)).toBe("[1, // c\n  3]");
    expect(remove("[1, // c\n  2\n]", 1)).toBe("[1 // c\n]");
    expect(remove("[\n  // lead\n  1\n]", 0)).toBe("[\n  // lead\n]");
    expect(remove('{ "a": 1, "b": 2, }', 1)).toBe('{ "a": 1, }');
    for (const text of ["[1,\n 2, // two\n 3]", "[1, /* c */ 2]", '{"a": 1, /* x */ "b": 2,}'])
      for (let i = 0; i < 2; i++) expect(() => parseJsoncTree(remove(text, i))).not.toThrow();
  });

  it("adds a member laid out as its container, and removing it gives the text back", () => {
    const value = { q: [1, { r: 2 }] };
    for (const [text, added] of [
      ["[1, /* c */ 2]", '[1, /* c */ 2, {"q": [1, {"r": 2}]}]'],
      ['{"a":{"b":1}}', '{"a":{"b":1},"z":{"q":[1,{"r":2}]}}'],
      [
        '{\r\n\t"a": 1\r\n}',
        '{\r\n\t"a": 1,\r\n\t"z": {\r\n\t\t"q": [\r\n\t\t\t1,\r\n\t\t\t{\r\n\t\t\t\t"r": 2\r\n\t\t\t}\r\n\t\t]\r\n\t}\r\n}',
      ],
      [
        "{\n  // nothing yet\n}",
        '{\n  // nothing yet\n  "z": {\n    "q": [\n      1,\n      {\n        "r": 2\n      }\n    ]\n  }\n}',
      ],
    ]) {
      const root = parseJsoncTree(text);
      const key = text.startsWith("[") ? undefined : "z";
      const result = addMember(text, root, key, value, layoutOf(text, root));
      expect(result).toBe(added);
      const members = parseJsoncTree(result).members ?? [];
      expect(remove(result, members.length - 1)).toBe(text);
    }
  });
});
