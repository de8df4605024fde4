import { describe, expect, it } from "vitest";
import { parseStatusV2 } from "../../src/git/status.js";

const H = "a".repeat(40);
const I = "b".repeat(40);
const Z = "0".repeat(40);
const rec = (...records: (string | Buffer)[]) =>
  Buffer.concat(
    records.flatMap((r) => [typeof r === "string" ? Buffer.from(r, "utf8") : r, Buffer.from([0])]),
  );

describe("parseStatusV2", () => {
  it("parses ordinary changes with their modes, ids and staged/unstaged letters", () => {
    const out = rec(
      `1 .M N... 100644 100644 100644 ${H} ${H} a file with spaces.txt`,
      `1 A. N... 000000 100755 100755 ${Z} ${I} bin/run`,
      `1 D. N... 100644 000000 000000 ${H} ${Z} gone`,
      `1 MD N... 100644 100644 000000 ${H} ${I} staged then deleted`,
    );
    expect(parseStatusV2(out)).toEqual([
      {
        kind: "changed",
        x: ".",
        y: "M",
        indexMode: "100644",
        worktreeMode: "100644",
        headOid: H,
        indexOid: H,
        path: "a file with spaces.txt",
      },
      {
        kind: "changed",
        x: "A",
        y: ".",
        indexMode: "100755",
        worktreeMode: "100755",
        headOid: Z,
        indexOid: I,
        path: "bin/run",
      },
      {
        kind: "changed",
        x: "D",
        y: ".",
        indexMode: "000000",
        worktreeMode: "000000",
        headOid: H,
        indexOid: Z,
        path: "gone",
      },
      {
        kind: "changed",
        x: "M",
        y: "D",
        indexMode: "100644",
        worktreeMode: "000000",
        headOid: H,
        indexOid: I,
        path: "staged then deleted",
      },
    ]);
  });

  it("keeps names with newlines, trailing spaces, quotes and non-UTF-8 bytes intact", () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    const out = rec(
      `1 .M N... 100644 100644 100644 ${H} ${H} new\nline`,
      Buffer.concat([Buffer.from("? dir/"), latin1]),
      `? "quoted" name `,
      `? -dash`,
    );
    expect(parseStatusV2(out).map((e) => e.path)).toEqual([
      "new\nline",
      `dir/${latin1.toString("latin1")}`,
      `"quoted" name `,
      "-dash",
    ]);
  });

  it("skips the original path that follows a rename record", () => {
    const out = rec(`2 R. N... 100644 100644 100644 ${H} ${H} R100 new name`, "old name", "? after");
    const entries = parseStatusV2(out);
    expect(entries.map((e) => [e.kind, e.path])).toEqual([
      ["changed", "new name"],
      ["untracked", "after"],
    ]);
  });

  it("parses unmerged, untracked (a nested repository as dir/) and ignored records", () => {
    const out = rec(
      `u UU N... 100644 100644 100644 100644 ${H} ${I} ${Z} both modified.txt`,
      "? vendor/lib/",
      "! build/out.o",
    );
    expect(parseStatusV2(out)).toEqual([
      { kind: "unmerged", worktreeMode: "100644", path: "both modified.txt" },
      { kind: "untracked", path: "vendor/lib/" },
      { kind: "ignored", path: "build/out.o" },
    ]);
  });

  it("ignores header lines and empty output", () => {
    expect(parseStatusV2(Buffer.alloc(0))).toEqual([]);
    expect(parseStatusV2(rec("# branch.oid (initial)", "? x"))).toEqual([{ kind: "untracked", path: "x" }]);
  });

  it("leaves out the untracked paths the caller sets aside, handing it each path's place in the output", () => {
    const out = rec(
      `1 .M N... 100644 100644 100644 ${H} ${H} kept/changed`,
      "? deps/a",
      `2 R. N... 100644 100644 100644 ${H} ${H} R100 deps/renamed`,
      "deps/old",
      "? deps/b",
      "? new.txt",
      "! deps/ignored",
    );
    const seen: string[] = [];
    const entries = parseStatusV2(out, (text, start, end) => {
      const path = text.slice(start, end);
      seen.push(path);
      return path.startsWith("deps/");
    });
    expect(seen).toEqual(["deps/a", "deps/b", "new.txt"]);
    expect(entries.map((e) => [e.kind, e.path])).toEqual([
      ["changed", "kept/changed"],
      ["changed", "deps/renamed"],
      ["untracked", "new.txt"],
      ["ignored", "deps/ignored"],
    ]);
  });
});
