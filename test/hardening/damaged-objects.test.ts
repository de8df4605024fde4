import { randomBytes } from "node:crypto";
import {
  closeSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
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
const packDir = () => path.join(gitDir(), "objects", "pack");
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

/** Makes a pack (and what is beside it) look as old as one no process is still writing. */
function age(file: string): void {
  const old = new Date(Date.now() - 700_000);
  utimesSync(file, old, old);
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

  it("a pack whose index was deleted: doctor names it, repair indexes it again and keeps every snapshot", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    repo.write({ "u.txt": "first\n" });
    const first = (await snapshotIn(repo)).id;
    repo.write({ "u.txt": "second\n" });
    const second = (await snapshotIn(repo)).id;
    repo.ok("gc");
    const [pack] = readdirSync(packDir()).filter((n) => n.endsWith(".pack"));
    const packFile = path.join(packDir(), pack);
    rmSync(packFile.replace(/\.pack$/, ".idx"));
    age(packFile);
    // A repair killed while it indexed a pack leaves its temp index (its pid is gone).
    const temp = path.join(packDir(), "tmp_idx_gc_999999999_0a1b2c");
    writeFileSync(temp, "half an index");

    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({ code: "unindexed-pack", path: packFile }),
    );
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({ code: "leftover-temp-pack", path: temp }),
    );
    // The snapshots look damaged meanwhile, and the advice says the repair tries the pack first.
    const lost = doctor.json.problems.filter(
      (p: any) => p.code !== "unindexed-pack" && p.code !== "leftover-temp-pack",
    );
    expect(lost.length).toBeGreaterThan(0);
    for (const problem of lost) expect(problem.message).toContain(", unless the pack it indexes again holds");

    const repaired = repo.ok("doctor", "--repair");
    expect(repaired.repaired.map((r: any) => [r.code, r.path])).toEqual(
      expect.arrayContaining([
        ["reindexed-pack", packFile],
        ["removed-leftover", temp],
      ]),
    );
    expect(codes(repaired.repaired)).not.toContain("dropped-damaged-snapshot");
    expect(repaired.ok).toBe(true);
    expect((await listIn(repo)).map((s: any) => s.id)).toEqual([second, first]);
    repo.ok("restore", first);
    expect(repo.read("u.txt")).toBe("first\n");
    expect(repo.cli(["gc"]).status).toBe(0);
    expect(readdirSync(packDir()).filter((n) => !n.startsWith("pack-"))).toEqual([]);
    expect(repo.ok("doctor").ok).toBe(true);
  });

  it("a pack cut short without its index: repair keeps what git reads of it, removes it and drops the snapshots it held", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    for (let i = 0; i < 3; i++) {
      repo.write({ [`u${i}.txt`]: randomBytes(20_000).toString("hex") });
      await snapshotIn(repo);
    }
    repo.ok("gc");
    for (let i = 0; i < 3; i++) repo.remove(`u${i}.txt`);
    repo.write({ "after.txt": "after the gc\n" });
    const later = (await snapshotIn(repo)).id; // its own objects are loose
    const [pack] = readdirSync(packDir()).filter((n) => n.endsWith(".pack"));
    const packFile = path.join(packDir(), pack);
    rmSync(packFile.replace(/\.pack$/, ".idx"));
    truncateSync(packFile, Math.floor(statSync(packFile).size / 2));
    age(packFile);
    expect(repo.cli(["doctor", "--json"]).json.problems).toContainEqual(
      expect.objectContaining({ code: "unindexed-pack", path: packFile }),
    );

    const repaired = repo.ok("doctor", "--repair");
    const removed = repaired.repaired.find((r: any) => r.code === "removed-damaged-pack");
    expect(removed).toEqual(expect.objectContaining({ path: packFile }));
    expect(removed.message).toMatch(
      /which git cannot index \(.+\), after keeping the \d+ object\(s\) git could read from it/,
    );
    expect(codes(repaired.repaired)).toContain("dropped-damaged-snapshot");
    expect(repaired.ok).toBe(true);
    expect(readdirSync(packDir()).filter((n) => n.startsWith(pack.replace(/\.pack$/, "")))).toEqual([]);
    expect((await listIn(repo)).map((s: any) => s.id)).toContain(later);
    repo.remove("after.txt");
    repo.ok("restore", later);
    expect(repo.read("after.txt")).toBe("after the gc\n");
    expect(repo.cli(["gc"]).status).toBe(0);
    expect(repo.ok("doctor").ok).toBe(true);
  });
  it("a pack cut short beside its index (a crash or a full disk as it was copied): doctor names it, gc says to run it, repair removes it and later snapshots are whole", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    const contents = [0, 1, 2].map(() => randomBytes(20_000).toString("hex"));
    for (const [i, content] of contents.entries()) {
      repo.write({ [`u${i}.txt`]: content });
      await snapshotIn(repo);
    }
    repo.ok("gc");
    const [pack] = readdirSync(packDir()).filter((n) => n.endsWith(".pack"));
    const packFile = path.join(packDir(), pack);
    truncateSync(packFile, 100); // its .idx still lists every object
    const found = repo.cli(["doctor", "--json"]);
    expect(found.status).toBe(1);
    expect(found.json.problems).toContainEqual(
      expect.objectContaining({ code: "damaged-pack", path: packFile }),
    );
    // Until repaired, gc fails on it every time: said as damage, with what mends it.
    const gc = repo.cli(["gc", "--json"]);
    expect(gc.status).toBe(1);
    expect(gc.json.error.code).toBe("store-damaged");
    expect(gc.json.error.message).toContain("`ghostcommit doctor`");

    const repaired = repo.ok("doctor", "--repair");
    expect(codes(repaired.repaired)).toEqual(
      expect.arrayContaining(["removed-damaged-pack", "dropped-damaged-snapshot"]),
    );
    expect(repaired.ok).toBe(true);
    expect(readdirSync(packDir()).filter((n) => n.startsWith(pack.replace(/\.pack$/, "")))).toEqual([]);
    // The same content again: its objects are written anew, not taken for present through the
    // index of the pack that lost them, so the snapshot restores.
    const again = (await snapshotIn(repo)).id;
    for (const i of [0, 1, 2]) repo.remove(`u${i}.txt`);
    repo.ok("restore", again);
    for (const [i, content] of contents.entries()) expect(repo.read(`u${i}.txt`)).toBe(content);
    expect(repo.cli(["gc"]).status).toBe(0);
    expect(repo.ok("doctor").ok).toBe(true);
  });
});
