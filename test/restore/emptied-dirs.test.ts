import { chownSync, lstatSync, renameSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Repo } from "../helpers/repo.js";
import { sessionSandbox, turn } from "../session/support.js";
import { logIn } from "../helpers/in-process.js";

const { repo } = sessionSandbox();

/** What a directory is to its user: the same inode, mode bits (setgid included) and owner. */
function dirState(r: Repo, rel: string): { ino: number; mode: string; uid: number } {
  const stat = lstatSync(r.path(rel));
  return { ino: stat.ino, mode: (stat.mode & 0o7777).toString(8), uid: stat.uid };
}

/** A turn that renames every file in a private and in a setgid directory (index.js → index.ts). */
async function renamingTurn(): Promise<{ r: Repo; before: Record<string, ReturnType<typeof dirState>> }> {
  const r = repo({ "private/keys.txt": "secret\n", "src/util/index.js": "module.exports = 1\n" });
  r.chmod("private", 0o700);
  r.chmod("src/util", 0o2750);
  const before = { private: dirState(r, "private"), "src/util": dirState(r, "src/util") };
  await turn(r, "s", "1", () => {
    renameSync(r.path("private/keys.txt"), r.path("private/keys.old"));
    renameSync(r.path("src/util/index.js"), r.path("src/util/index.ts"));
  });
  return { r, before };
}

describe("a directory a restore empties and writes into again", () => {
  it("is kept by rewind and by redo: same inode, mode 0700 and setgid 2750", async () => {
    const { r, before } = await renamingTurn();
    const rewound = r.ok("rewind", "--session", "s", "--to", "1");
    expect(rewound.written.sort()).toEqual(["private/keys.txt", "src/util/index.js"]);
    expect({ private: dirState(r, "private"), "src/util": dirState(r, "src/util") }).toEqual(before);
    r.ok("redo", "--session", "s");
    expect([r.exists("private/keys.old"), r.exists("src/util/index.ts")]).toEqual([true, true]);
    expect({ private: dirState(r, "private"), "src/util": dirState(r, "src/util") }).toEqual(before);
  });

  it("is kept by a plain restore of the snapshot before the turn", async () => {
    const { r, before } = await renamingTurn();
    const snapshot = (await logIn(r, "s"))[0].before;
    r.ok("restore", snapshot);
    expect(r.read("private/keys.txt")).toBe("secret\n");
    expect({ private: dirState(r, "private"), "src/util": dirState(r, "src/util") }).toEqual(before);
  });

  it("still removes a directory the restore leaves empty", async () => {
    const r = repo({ "keep.txt": "k\n" });
    await turn(r, "s", "1", () => r.write({ "made/by/agent.txt": "agent\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    expect(r.exists("made")).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)("keeps another user's directory theirs when run as root", async () => {
    const r = repo({ "nob/gone.txt": "g\n" });
    chownSync(r.path("nob"), 65534, 65534);
    chownSync(r.path("nob/gone.txt"), 65534, 65534);
    const before = dirState(r, "nob");
    await turn(r, "s", "1", () => {
      r.remove("nob/gone.txt");
      r.write({ "nob/newdir/q": "q\n" });
    });
    r.ok("rewind", "--session", "s", "--to", "1");
    expect(dirState(r, "nob")).toEqual(before);
    expect(lstatSync(r.path("nob/gone.txt")).uid).toBe(65534);
    expect(r.exists("nob/newdir")).toBe(false);
  });
});
