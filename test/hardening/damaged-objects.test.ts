import { randomBytes } from "node:crypto";
import { closeSync, openSync, statSync, truncateSync, writeSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { listIn } from "../helpers/in-process.js";
import { snapshotIn } from "../session/support.js";
import { storeDir } from "./helpers.js";

let sb: Sandbox;
beforeEach(() => {
  sb = new Sandbox();
});
afterEach(() => sb.cleanup());

const gitDir = () => path.join(storeDir(sb), "git");
const objectFile = (id: string) => path.join(gitDir(), "objects", id.slice(0, 2), id.slice(2));
const blobOf = (id: string, rel: string) =>
  sb.git(sb.home, `--git-dir=${gitDir()}`, "rev-parse", `${id}:${rel}`).trim();
const codes = (items: { code: string }[]) => items.map((item) => item.code).sort();

/** Overwrites bytes in the middle of a file, as a disk fault does. */
function scribble(file: string): void {
  const fd = openSync(file, "r+");
  writeSync(fd, Buffer.alloc(16, "X"), 0, 16, Math.floor(statSync(file).size / 2));
  closeSync(fd);
}

describe("damaged objects in the store", () => {
  it.each([
    ["bytes overwritten mid-file", "small", scribble],
    ["emptied (a power cut before the disk had it)", "small", (file: string) => truncateSync(file, 0)],
    ["bytes overwritten mid-file, in an object read as a stream", "large", scribble],
  ] as const)(
    "a loose object %s (%s): doctor names it, repair removes it and drops only the snapshots that need it, gc works again",
    async (_damage, size, damage) => {
      const repo = sb.repo("ws", { "a.txt": "one\n" });
      const content = size === "large" ? randomBytes(1_000_000).toString("hex") : `${"line\n".repeat(2000)}`;
      repo.write({ "u.txt": content, "big.txt": randomBytes(1_200_000).toString("hex") });
      const damaged = (await snapshotIn(repo)).id;
      repo.write({ "u.txt": "edited\n" });
      const healthy = (await snapshotIn(repo)).id;
      const file = objectFile(blobOf(damaged, "u.txt"));
      expect(statSync(file).size > 1024 * 1024).toBe(size === "large");
      damage(file);
      // Before: doctor and repair said nothing, and every gc failed on the object.
      expect(repo.cli(["gc"]).status).toBe(1);

      const doctor = repo.cli(["doctor", "--json"]);
      expect([doctor.status, doctor.json.problems.map((p: any) => [p.code, p.path])]).toEqual([
        1,
        [["damaged-object", file]],
      ]);
      expect(doctor.json.problems[0].message).toContain("`doctor --repair` removes it");

      const repaired = repo.ok("doctor", "--repair");
      expect(codes(repaired.repaired)).toEqual(["dropped-damaged-snapshot", "removed-damaged-object"]);
      expect(repaired.repaired.find((r: any) => r.code === "dropped-damaged-snapshot").message).toContain(
        damaged,
      );
      expect(repaired.ok).toBe(true);
      expect((await listIn(repo)).map((s: any) => s.id)).toEqual([healthy]);
      expect(repo.cli(["gc"]).status).toBe(0);
      repo.write({ "u.txt": "later\n" });
      repo.ok("restore", healthy);
      expect(repo.read("u.txt")).toBe("edited\n");
      expect(repo.ok("doctor").ok).toBe(true);
    },
  );

  it("a damaged loose copy of an object your repository also holds: repair removes it and the snapshot is kept whole", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    repo.write({ "u.txt": "line\n".repeat(2000) });
    const snap = (await snapshotIn(repo)).id;
    // You commit the file since, and your gc packs it: your repository holds its own copy.
    repo.git("add", "u.txt");
    repo.git("commit", "-qm", "u");
    repo.git("gc", "-q");
    const file = objectFile(blobOf(snap, "u.txt"));
    scribble(file);
    expect(repo.cli(["doctor", "--json"]).json.problems.map((p: any) => p.code)).toEqual(["damaged-object"]);

    const repaired = repo.ok("doctor", "--repair");
    expect(repaired.repaired).toEqual([
      expect.objectContaining({ code: "removed-damaged-object", path: file }),
    ]);
    expect(repaired.repaired[0].message).toContain("another copy holds it whole, nothing is lost");
    expect((await listIn(repo)).map((s: any) => s.id)).toEqual([snap]);
    repo.remove("u.txt");
    repo.ok("restore", snap);
    expect(repo.read("u.txt")).toBe("line\n".repeat(2000));
    expect(repo.cli(["gc"]).status).toBe(0);
    expect(repo.ok("doctor").ok).toBe(true);
  });
});
