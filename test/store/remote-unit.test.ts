import { describe, expect, it } from "vitest";
import { validateSettings } from "../../src/config.js";
import { GhostcommitError } from "../../src/errors.js";
import { extendsJournal } from "../../src/session/remote-sessions.js";
import { remoteNamespace } from "../../src/store/remote.js";

describe("push settings", () => {
  it("accepts the background push entry and fills in its defaults", () => {
    expect(validateSettings({ push: { remote: "origin", after: "turn" } }, "x").push).toEqual({
      remote: "origin",
      after: "turn",
    });
    expect(validateSettings({ push: {} }, "x").push).toEqual({ remote: "origin", after: "turn" });
  });

  it.each([
    { push: "origin" },
    { push: { remote: "origin", after: "always" } },
    { push: { remote: "" } },
    { push: { remote: "--upload-pack=evil" } },
    { push: { remote: "origin", extra: 1 } },
  ])("rejects %j", (settings) => {
    expect(() => validateSettings(settings, "x")).toThrow(GhostcommitError);
  });
});

describe("remote layout", () => {
  it("gives the repository root and each subdirectory workspace its own namespace", () => {
    const at = (prefix: string) => remoteNamespace({ root: "/r", kind: "git", prefix, key: "k" });
    expect(at("")).toBe("refs/ghostcommit/root/");
    expect(at("packages/app")).toMatch(/^refs\/ghostcommit\/dir-[0-9a-f]{16}\/$/);
    expect(at("packages/app")).not.toBe(at("packages/lib"));
  });

  it("treats a journal as continued only when the old one is a byte prefix of the new", () => {
    const old = Buffer.from('{"e":"session","session":"s","t":1}\n');
    const grown = Buffer.concat([
      old,
      Buffer.from('{"e":"begin","turn":"1","prompt":"","before":"x","t":2}\n'),
    ]);
    const other = Buffer.from('{"e":"session","session":"s","t":7}\n');
    expect([extendsJournal(grown, old), extendsJournal(old, grown), extendsJournal(grown, other)]).toEqual([
      true,
      false,
      false,
    ]);
  });
});
