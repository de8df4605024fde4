import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Repo, Sandbox } from "../helpers/repo.js";
import { snapshotIn, turn } from "../session/support.js";
import { storeDir } from "./helpers.js";
import { listIn, logIn } from "../helpers/in-process.js";

let sb: Sandbox;
beforeEach(() => {
  sb = new Sandbox();
});
afterEach(() => sb.cleanup());

function objectFile(id: string): string {
  return path.join(storeDir(sb), "git", "objects", id.slice(0, 2), id.slice(2));
}

/** The blob id of `rel` in snapshot `id`, read from the store. */
function blobOf(id: string, rel: string): string {
  return sb.git(sb.home, `--git-dir=${path.join(storeDir(sb), "git")}`, "rev-parse", `${id}:${rel}`).trim();
}

// The snapshots and turns that only put a store in the state a test damages are taken in-process
// (snapshotIn, turn); the commands that meet the damage run on the command line.
describe("a damaged store", () => {
  it("restore of a snapshot whose tree is gone says the store is damaged and how to repair it, changing nothing", async () => {
    const repo = sb.repo("ws-tree", { "a.txt": "one\n" });
    repo.write({ "dir/new.txt": "only in the snapshot\n" });
    const damaged = (await snapshotIn(repo)).id;
    repo.remove("dir");
    repo.write({ "a.txt": "edited\n" });
    await snapshotIn(repo);
    rmSync(objectFile(blobOf(damaged, "dir")));

    const failed = repo.cli(["restore", damaged, "--json"]);
    expect([failed.status, failed.json.error.code]).toEqual([1, "store-damaged"]);
    expect(failed.stderr).toBe(
      `ghostcommit: the store is missing object ${blobOf(damaged, "dir")}: \`ghostcommit doctor\` names the snapshots it damages, \`doctor --repair\` drops them\n`,
    );
    expect([repo.read("a.txt"), repo.exists("dir")]).toEqual(["edited\n", false]);
  });

  it("restore refuses before changing any file when a blob is missing, and other snapshots keep working", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    repo.write({ "new.txt": "only in the snapshot\n" });
    const damaged = (await snapshotIn(repo)).id;
    repo.remove("new.txt");
    repo.write({ "b.txt": "b\n" });
    const healthy = (await snapshotIn(repo)).id;
    rmSync(objectFile(blobOf(damaged, "new.txt")));
    repo.write({ "a.txt": "edited\n" });

    const failed = repo.cli(["restore", damaged, "--json"]);
    expect(failed.status).toBe(1);
    expect(failed.json.error.code).toBe("store-damaged");
    expect(failed.stderr).toBe(
      `ghostcommit: the store is missing object ${blobOf(damaged, "new.txt")}; nothing was changed: \`ghostcommit doctor\` names the snapshots it damages, \`doctor --repair\` drops them\n`,
    );
    expect(repo.read("a.txt")).toBe("edited\n"); // nothing changed
    expect(repo.exists("new.txt")).toBe(false);

    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems.map((p: any) => p.code)).toContain("missing-objects");
    expect(JSON.stringify(doctor.json.problems)).toContain(damaged);
    // Each finding names its way on.
    expect(doctor.json.problems.find((p: any) => p.code === "missing-objects").message).toContain(
      "; `doctor --repair` drops it",
    );

    // other snapshots still list and restore
    expect((await listIn(repo)).map((s: any) => s.id)).toContain(healthy);
    repo.ok("restore", healthy);
    expect(repo.read("a.txt")).toBe("one\n");

    const repair = repo.ok("doctor", "--repair");
    expect(repair.ok).toBe(true);
    expect(repair.repaired.map((r: any) => r.code)).toContain("dropped-damaged-snapshot");
    expect((await listIn(repo)).map((s: any) => s.id)).not.toContain(damaged);
    expect((await listIn(repo)).map((s: any) => s.id)).toContain(healthy);
  });

  it("a missing snapshot commit breaks neither list (which says it is left out) nor the other snapshots; repair drops its ref", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    const gone = (await snapshotIn(repo)).id;
    repo.write({ "a.txt": "two\n" });
    const kept = (await snapshotIn(repo)).id;
    rmSync(objectFile(gone));
    expect((await listIn(repo)).map((s: any) => s.id)).toEqual([kept]);
    // The command line lists the rest and says one is left out, and what names the damage.
    const listed = repo.cli(["list"]);
    expect(listed.status).toBe(1);
    expect(listed.stdout).toContain(kept.slice(0, 12));
    expect(listed.stderr).toBe(
      "ghostcommit: 1 snapshot of this workspace cannot be read (its commit is missing or damaged) and is not listed: `ghostcommit doctor` names the damage, and `doctor --repair` mends what it can\n",
    );
    // Named, it is said to be damaged, not unknown.
    const named = repo.cli(["restore", gone.slice(0, 12), "--json"]);
    expect(named.status).toBe(1);
    expect(named.json.error).toEqual({
      code: "store-damaged",
      message: `snapshot ${gone} cannot be read (its commit is missing or damaged): \`ghostcommit doctor\` names the damage, and \`doctor --repair\` drops it`,
    });
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toContainEqual(expect.objectContaining({ code: "bad-snapshot" }));
    repo.write({ "a.txt": "three\n" });
    repo.ok("restore", kept);
    expect(repo.read("a.txt")).toBe("two\n");
    expect(repo.ok("doctor", "--repair").ok).toBe(true);
    expect(repo.ok("doctor").ok).toBe(true);
  });

  it.each([
    ["hash-cache.json", "null"],
    ["hash-cache.json", '{"a.txt": 5, "b": ["1","2","3","4","zz"]}'],
    ["base-info.json", '{"tree": "x", "ghostignored": 5}'],
    ["borrowed.json", '{"loose": 5, "packs": "x"}'],
    ["last-safety.json", "\u0000\u0001garbage"],
  ])(
    "garbage in %s (%s) never breaks a snapshot, restore or gc; doctor reports it, repair resets it",
    async (name, garbage) => {
      const repo = sb.repo("ws", { "a.txt": "one\n" });
      repo.write({ "u.txt": "untracked\n" });
      const first = (await snapshotIn(repo)).id;
      const file = path.join(storeDir(sb), name);
      writeFileSync(file, garbage);
      const doctor = repo.cli(["doctor", "--json"]);
      expect(doctor.status).toBe(1);
      expect(doctor.json.problems).toContainEqual(
        expect.objectContaining({ code: "damaged-state-file", path: file }),
      );
      repo.write({ "a.txt": "two\n" });
      writeFileSync(file, garbage);
      const second = await snapshotIn(repo);
      expect(second.fileCount).toBe(2);
      writeFileSync(file, garbage);
      repo.ok("restore", first);
      expect(repo.read("a.txt")).toBe("one\n");
      writeFileSync(file, garbage);
      repo.ok("gc");
      writeFileSync(file, garbage);
      const repair = repo.ok("doctor", "--repair");
      expect(repair.ok).toBe(true);
      expect(repair.repaired).toContainEqual(
        expect.objectContaining({ code: "reset-state-file", path: file }),
      );
      expect(repo.ok("doctor").ok).toBe(true);
    },
  );

  it("repair removes the temp files a failed repack left in the store (an hour old), not a running one's", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    await snapshotIn(repo);
    const pack = path.join(storeDir(sb), "git", "objects", "pack");
    const old = [path.join(pack, "tmp_pack_mHXEBo"), path.join(pack, "tmp_idx_Q1w2e3")];
    const fresh = path.join(pack, "tmp_pack_running");
    for (const file of [...old, fresh]) writeFileSync(file, "half a pack");
    const hourAgo = new Date(Date.now() - 3_700_000);
    for (const file of old) utimesSync(file, hourAgo, hourAgo);
    const repair = repo.ok("doctor", "--repair");
    expect(
      repair.repaired
        .filter((r: any) => r.code === "removed-leftover")
        .map((r: any) => r.path)
        .sort(),
    ).toEqual(old.sort());
    expect(readdirSync(pack).filter((n) => n.startsWith("tmp_"))).toEqual(["tmp_pack_running"]);
  });

  it("a pack deleted from the store: repair drops its snapshots and removes the index it left, not a fetch's fresh .keep", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    repo.write({ "b.txt": "two\n" });
    await snapshotIn(repo);
    repo.ok("gc");
    const pack = path.join(storeDir(sb), "git", "objects", "pack");
    const [packFile] = readdirSync(pack).filter((n) => n.endsWith(".pack"));
    const index = path.join(pack, packFile.replace(/\.pack$/, ".idx"));
    rmSync(path.join(pack, packFile));
    const tenMinutesAgo = new Date(Date.now() - 700_000);
    utimesSync(index, tenMinutesAgo, tenMinutesAgo);
    // git's index-pack writes a pack's .keep before the pack itself.
    const arriving = path.join(pack, `pack-${"e".repeat(40)}.keep`);
    writeFileSync(arriving, "fetch in progress\n");
    expect(repo.cli(["doctor"]).status).toBe(1);

    const repair = repo.ok("doctor", "--repair");
    expect(repair.repaired.filter((r: any) => r.code === "removed-leftover").map((r: any) => r.path)).toEqual(
      [index],
    );
    expect(repair.repaired.filter((r: any) => r.code === "dropped-damaged-snapshot")).toHaveLength(1);
    expect(readdirSync(pack)).toEqual([path.basename(arriving)]);
    expect(repo.ok("doctor").problems).toEqual([]);
  });

  it("repair names a few leftover files it removed and counts the rest (--json lists each)", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    await snapshotIn(repo);
    // As thousands of a killed restore's temp files would be: here, failed repacks' temp files.
    const pack = path.join(storeDir(sb), "git", "objects", "pack");
    const hourAgo = new Date(Date.now() - 3_700_000);
    for (let i = 0; i < 8; i++) {
      writeFileSync(path.join(pack, `tmp_pack_left${i}`), "half a pack");
      utimesSync(path.join(pack, `tmp_pack_left${i}`), hourAgo, hourAgo);
    }
    const human = repo.cli(["doctor", "--repair"]);
    expect(human.status, human.stderr).toBe(0);
    const lines = human.stdout.split("\n").filter((line) => line.startsWith("repaired "));
    expect(lines.filter((line) => line.includes("tmp_pack_left"))).toHaveLength(3);
    expect(lines).toContain("repaired removed 5 more leftover files (--json lists each)");
    for (let i = 0; i < 8; i++) writeFileSync(path.join(pack, `tmp_pack_left${i}`), "half a pack");
    for (let i = 0; i < 8; i++) utimesSync(path.join(pack, `tmp_pack_left${i}`), hourAgo, hourAgo);
    const json = repo.ok("doctor", "--repair");
    expect(json.repaired.filter((r: any) => r.code === "removed-leftover")).toHaveLength(8);
  });

  it("a store git directory without its HEAD, refs/ or a readable config: doctor names it and repair writes them again", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    await turn(repo, "s", "1", () => repo.write({ "a.txt": "two\n" }));
    const gitDir = path.join(storeDir(sb), "git");
    const { after } = (await logIn(repo, "s"))[0];
    for (const [damage, named, said] of [
      [() => rmSync(path.join(gitDir, "HEAD")), "HEAD", "its HEAD is missing"],
      // Garbled or emptied: git then takes the directory for no repository at all, and said
      // "not a git repository" of the store (a raw git error) where it failed.
      [() => writeFileSync(path.join(gitDir, "HEAD"), "garbage\n"), "HEAD", "its HEAD is garbled"],
      [() => writeFileSync(path.join(gitDir, "HEAD"), ""), "HEAD", "its HEAD is garbled"],
      [() => writeFileSync(path.join(gitDir, "config"), "[core\n\tjunk"), "config", null],
    ] as const) {
      damage();
      const taken = repo.cli(["snapshot", "--json"]);
      expect(taken.status).toBe(1);
      // Not "no snapshots yet": the store is there, damaged.
      const listed = repo.cli(["list", "--json"]);
      expect(listed.status).toBe(1);
      expect(listed.stdout).not.toContain("no snapshots");
      if (said) {
        for (const failed of [taken, listed, repo.cli(["show", after, "--json"])]) {
          expect(failed.json.error.code, failed.stdout).toBe("store-damaged");
          expect(failed.json.error.message).toContain(`damaged (${said})`);
          expect(failed.json.error.message).toContain("`ghostcommit doctor --repair`");
        }
      }
      const doctor = repo.cli(["doctor", "--json"]);
      expect(doctor.status).toBe(1);
      expect(doctor.json.problems.map((p: any) => p.code)).toEqual(["damaged-store"]);
      expect(doctor.json.problems[0].message).toContain(`damaged (${named} missing or unreadable)`);
      const repaired = repo.ok("doctor", "--repair");
      expect(repaired.repaired.map((r: any) => r.code)).toContain("rewrote-store-frame");
      expect(repaired.ok).toBe(true);
      expect(await logIn(repo, "s")).toHaveLength(1);
    }
    expect(repo.cli(["snapshot"]).status).toBe(0);
    repo.ok("rewind", "--session", "s", "--to", "1");
    expect(repo.read("a.txt")).toBe("one\n");
  });

  it("a snapshot ref that holds no id: doctor names it, repair writes it again from its name, gc works again", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    const snap = (await snapshotIn(repo)).id;
    const refs = path.join(storeDir(sb), "git", "refs", "ghostcommit", "snapshots");
    writeFileSync(path.join(refs, snap), "zzzz\n");
    const stray = path.join(refs, "not-an-id");
    writeFileSync(stray, "garbage\n");
    // Before: the snapshot dropped out of list, doctor found nothing, and gc failed on every run.
    const doctor = repo.cli(["doctor", "--json"]);
    expect([doctor.status, doctor.json.problems.map((p: any) => [p.code, p.path]).sort()]).toEqual([
      1,
      [
        ["damaged-ref", path.join(refs, snap)],
        ["damaged-ref", path.join(refs, "not-an-id")],
      ].sort(),
    ]);
    const repaired = repo.ok("doctor", "--repair");
    expect(repaired.repaired.map((r: any) => r.code).sort()).toEqual([
      "removed-damaged-ref",
      "rewrote-damaged-ref",
    ]);
    expect(repaired.ok).toBe(true);
    expect((await listIn(repo)).map((s: any) => s.id)).toEqual([snap]);
    expect(repo.cli(["gc"]).status).toBe(0);
  });

  it("a fetch's temporary link refs left by a kill: doctor reports them, repair and gc remove them", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    const snap = (await snapshotIn(repo)).id;
    const gitDir = path.join(storeDir(sb), "git");
    const left = "refs/ghostcommit/fetched-links/0123456789abcdef0123456789abcdef01234567";
    const put = () => sb.git(sb.home, `--git-dir=${gitDir}`, "update-ref", left, snap);
    put();
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.json.problems.map((p: any) => p.code)).toEqual(["leftover-fetch-refs"]);
    expect(repo.ok("doctor", "--repair").repaired.map((r: any) => r.code)).toContain("removed-fetch-refs");
    put();
    repo.ok("drop", snap);
    repo.ok("gc");
    expect(sb.git(sb.home, `--git-dir=${gitDir}`, "for-each-ref", "refs/ghostcommit/fetched-links/")).toBe(
      "",
    );
    expect(() => sb.git(sb.home, `--git-dir=${gitDir}`, "cat-file", "-e", snap)).toThrow(); // freed
  });

  it("a snapshot killed while writing leaves its writer lock: doctor reports it, repair removes it", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    await snapshotIn(repo);
    const dead = spawnSync("true").pid!; // gone once spawnSync returns
    const writers = path.join(storeDir(sb), "writers");
    mkdirSync(writers, { recursive: true });
    const lock = path.join(writers, `${dead}-0123abcd.lock`);
    writeFileSync(
      lock,
      JSON.stringify({ pid: dead, host: os.hostname(), token: "0123abcd", since: Date.now() }),
    );
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.json.problems).toEqual([
      expect.objectContaining({
        code: "stale-lock",
        message: `writers/${path.basename(lock)} was left by a process that died; \`doctor --repair\` removes it`,
      }),
    ]);
    const repaired = repo.ok("doctor", "--repair");
    expect(repaired.repaired).toEqual([expect.objectContaining({ code: "removed-stale-lock", path: lock })]);
    expect(readdirSync(writers)).toEqual([]);
    // Without a repair, the next command that writes removes it: doctor is clean again after it.
    writeFileSync(
      lock,
      JSON.stringify({ pid: dead, host: os.hostname(), token: "0123abcd", since: Date.now() }),
    );
    repo.write({ "a.txt": "two\n" });
    await snapshotIn(repo);
    expect(readdirSync(writers)).toEqual([]);
    expect(repo.cli(["doctor", "--json"]).json.ok).toBe(true);
  });

  it("garbage in plain-state.json does not push new files over the budget", async () => {
    const dir = sb.dir("plain");
    writeFileSync(path.join(dir, "a.txt"), "a\n");
    await snapshotIn(new Repo(sb, dir));
    writeFileSync(path.join(storeDir(sb), "plain-state.json"), '{"files": "many", "bytes": null}');
    writeFileSync(path.join(dir, "b.txt"), "b\n");
    const snap = await snapshotIn({ sandbox: sb, dir });
    expect(snap.fileCount).toBe(2);
    expect(snap.excluded).toEqual([]);
  });

  it.each([
    ['{"identity": 5, "dirs": []}'],
    ["\u0000garbage"],
    ['{"identity": "x", "dirs": "src"}'],
    ['{"identity": "another index", "dirs": []}'],
  ])(
    "garbage in plain-ignore-files.json (%s) is read again from the index, never trusted",
    async (garbage) => {
      const dir = sb.dir("plain-ignore");
      mkdirSync(path.join(dir, "src"));
      writeFileSync(path.join(dir, "src/a.txt"), "a\n");
      await snapshotIn(new Repo(sb, dir));
      await snapshotIn(new Repo(sb, dir)); // the first that asks status, and records what its cache says
      const known = path.join(storeDir(sb), "plain-ignore-files.json");
      expect(JSON.parse(readFileSync(known, "utf8")).dirs).toEqual([]);
      writeFileSync(known, garbage);
      // A .gitignore that hides itself and its neighbours from git.
      writeFileSync(path.join(dir, "src/.gitignore"), "*\n");
      writeFileSync(path.join(dir, "src/new.txt"), "new\n");
      const snap = await snapshotIn({ sandbox: sb, dir });
      expect(sb.ok(dir, "show", snap.id).files).toEqual(["src/.gitignore", "src/a.txt", "src/new.txt"]);
    },
  );

  it("after gc expired everything, the next snapshots are complete and restorable (hash cache, plain index)", async () => {
    // git workspace: an untracked file whose blob id the hash cache remembers
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    repo.write({ "u.txt": "untracked\n" });
    const old = new Date(Date.now() - 3600_000);
    utimesSync(repo.path("u.txt"), old, old);
    await snapshotIn(repo);
    repo.ok("gc");
    await snapshotIn(repo);
    repo.ok("drop", ...repo.ok("list").map((s: any) => s.id));
    repo.ok("gc");
    const snap = (await snapshotIn(repo)).id;
    repo.remove("u.txt");
    repo.ok("restore", snap);
    expect(repo.read("u.txt")).toBe("untracked\n");
    expect(repo.ok("doctor").ok).toBe(true);

    // plain directory: the store's own index names blobs gc must keep
    const dir = sb.dir("plain");
    writeFileSync(path.join(dir, "x.txt"), "x\n");
    await snapshotIn({ sandbox: sb, dir });
    sb.ok(dir, "gc");
    sb.ok(dir, "drop", ...sb.ok(dir, "list").map((s: any) => s.id));
    sb.ok(dir, "gc");
    const plainSnap = (await snapshotIn({ sandbox: sb, dir })).id;
    rmSync(path.join(dir, "x.txt"));
    sb.ok(dir, "restore", plainSnap);
    expect(readFileSync(path.join(dir, "x.txt"), "utf8")).toBe("x\n");
    expect(sb.ok(dir, "doctor").ok).toBe(true);
  });
});
