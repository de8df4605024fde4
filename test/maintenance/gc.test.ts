import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { snapshotIn } from "../session/support.js";
import { listIn } from "../helpers/in-process.js";

/** Loose and packed bytes of the shadow store, as git counts them. */
function storeBytes(sandbox: Sandbox, gitDir: string): number {
  const text = execFileSync("git", ["count-objects", "-v"], {
    env: { ...sandbox.env, GIT_DIR: gitDir },
  }).toString();
  const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)`, "m").exec(text)?.[1] ?? 0);
  return (kib("size") + kib("size-pack")) * 1024;
}

describe("gc", () => {
  // The snapshots each test fills its store with are taken in-process (see snapshotIn): gc, the
  // subject, runs on the command line.
  it("counts the store as the disk holds it, and says why a store this small grew", async () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo("small", { "a.txt": "a\n" });
    await snapshotIn(repo);
    // One loose object of a few bytes (its block of 4 KiB, as du counts it) becomes a pack and
    // its index, a block each.
    expect(repo.cli(["gc"]).stdout).toMatch(
      /^dropped 0 snapshots, kept 1; store [\d.]+ KiB → [\d.]+ KiB \(packing adds an index, which outweighs what a store this small frees\)\n$/,
    );
    // Many loose objects, each a block on disk, take far more than their bytes until packed
    // (found in a trial: gc said 20 MiB where du said 116 MiB).
    for (let i = 0; i < 20; i++) {
      repo.write({ [`f${i}.txt`]: `${i}\n` });
      await snapshotIn(repo);
    }
    const packed = repo.ok("gc");
    expect(packed.bytesBefore).toBeGreaterThanOrEqual(60 * 4096);
    expect(packed.bytesAfter).toBeLessThan(packed.bytesBefore / 4);
    // Nothing left to pack: the store stays as it was, and nothing is said of it.
    const again = repo.cli(["gc"]).stdout;
    expect(again).toMatch(/^dropped 0 snapshots, kept 21; store ([\d.]+ KiB) → \1\n$/);
  });

  it("frees the content of expired snapshots at once, not ten minutes later", async () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo();
    // 30 snapshots of 200 KB of fresh, incompressible untracked content each
    for (let i = 0; i < 30; i++) {
      repo.write({ "data.bin": execFileSync("head", ["-c", "200000", "/dev/urandom"]).toString("base64") });
      await snapshotIn(repo);
    }
    const report = repo.ok("gc", "--keep", "1");
    expect(report.dropped).toHaveLength(29);
    expect(report.kept).toHaveLength(1);
    // what is left is about one snapshot's content, not thirty
    expect(report.bytesAfter).toBeLessThan(report.bytesBefore / 5);
    const gitDir = execFileSync("find", [
      sandbox.env.GHOSTCOMMIT_HOME!,
      "-maxdepth",
      "3",
      "-name",
      "git",
      "-type",
      "d",
    ])
      .toString()
      .trim();
    expect(storeBytes(sandbox, gitDir)).toBeLessThan(2 * 280_000);
    // the kept snapshot is whole
    const restore = repo.ok("restore", report.kept[0], "--dry-run");
    expect(restore.dryRun).toBe(true);
  });

  it("frees a plain directory's dropped content that its index still named (a file deleted since), and snapshots on", () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const dir = sandbox.dir("plain");
    const cli = (...args: string[]) => sandbox.ok(dir, ...args);
    writeFileSync(path.join(dir, "a.txt"), "kept\n");
    writeFileSync(path.join(dir, "secret.txt"), "TOKEN-3f9a0c\n");
    const leaked = cli("snapshot").id;
    rmSync(path.join(dir, "secret.txt"));
    cli("drop", leaked);
    cli("gc", "--keep", "0");
    const gitDir = path.join(cli("doctor").store as string, "git");
    const everything = execFileSync("git", ["cat-file", "--batch-all-objects", "--batch"], {
      env: { ...sandbox.env, GIT_DIR: gitDir },
    });
    expect(everything.toString("latin1")).not.toContain("TOKEN-3f9a0c");
    writeFileSync(path.join(dir, "b.txt"), "new\n");
    const next = cli("snapshot").id;
    expect(cli("show", next).files).toEqual(["a.txt", "b.txt"]);
    expect(cli("doctor").ok).toBe(true);
  });

  it("frees a plain directory's changed file's old content, keeping the index's other files known", () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const dir = sandbox.dir("plain");
    const cli = (...args: string[]) => sandbox.ok(dir, ...args);
    for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
    writeFileSync(path.join(dir, "config.txt"), "TOKEN-77b1e2\n");
    const leaked = cli("snapshot").id;
    writeFileSync(path.join(dir, "config.txt"), "TOKEN=from-env\n");
    cli("drop", leaked);
    cli("gc", "--keep", "0");
    const store = cli("doctor").store as string;
    const gitDir = path.join(store, "git");
    const everything = execFileSync("git", ["cat-file", "--batch-all-objects", "--batch"], {
      env: { ...sandbox.env, GIT_DIR: gitDir },
    });
    expect(everything.toString("latin1")).not.toContain("TOKEN-77b1e2");
    // The files that did not change stay known (the next snapshot does not read them again):
    // only the changed one left the store's index.
    const indexed = execFileSync("git", ["ls-files"], {
      cwd: dir,
      env: {
        ...sandbox.env,
        GIT_DIR: gitDir,
        GIT_WORK_TREE: dir,
        GIT_INDEX_FILE: path.join(store, "plain-index"),
      },
    }).toString();
    expect(indexed.split("\n").filter(Boolean)).toHaveLength(20);
    expect(indexed).not.toContain("config.txt");
    writeFileSync(path.join(dir, "f3.txt"), "changed\n");
    const next = cli("snapshot").id;
    expect(cli("show", next).files).toHaveLength(21);
    expect(cli("diff", next)).toEqual([]);
    expect(cli("doctor").ok).toBe(true);
  });

  it("over the size cap, drops the oldest snapshots it must and no more", async () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo();
    // 20 snapshots of 50 KB of fresh, incompressible untracked content each
    for (let i = 0; i < 20; i++) {
      repo.write({ "data.bin": execFileSync("head", ["-c", "50000", "/dev/urandom"]) });
      await snapshotIn(repo, { message: `s${i}` });
    }
    const size = repo.ok("gc").bytesAfter;
    // A cap 1 KB below the store: one snapshot's content is enough to drop, the oldest.
    repo.write({ ".ghostcommit.json": `{"maxStoreBytes": ${size - 1000}}\n` });
    const report = repo.ok("gc");
    expect(report.dropped).toHaveLength(1);
    expect(report.bytesAfter).toBeLessThanOrEqual(size - 1000);
    const left = (await listIn(repo)).map((s: { message: string }) => s.message);
    expect(left).not.toContain("s0");
    expect(left).toContain("s1");
  });

  it("over the size cap, goes on past snapshots whose files later ones hold too, in one run", async () => {
    // Found in a trial: each snapshot holds every file so far, so dropping the oldest frees
    // nothing by itself; gc stopped there, said dropping the rest would free nothing, and the
    // next run dropped one more.
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo();
    for (let i = 0; i < 4; i++) {
      repo.write({ [`f${i}.bin`]: execFileSync("head", ["-c", "100000", "/dev/urandom"]) });
      await snapshotIn(repo, { message: `s${i}` });
    }
    const size = repo.ok("gc").bytesAfter;
    // Under the cap only without the last two files: the two newest snapshots must go.
    repo.write({ ".ghostcommit.json": `{"maxStoreBytes": ${size - 150_000}}\n` });
    const report = repo.ok("gc");
    expect(report.bytesAfter).toBeLessThanOrEqual(size - 150_000);
    expect(report.overCap).toBeUndefined();
    expect(report.dropped).toHaveLength(4);
    expect(repo.ok("gc").dropped).toEqual([]);
  });

  it("in the repo store, measures the snapshots' objects in your repository and holds them to the size cap", async () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo();
    for (let i = 0; i < 10; i++) {
      repo.write({ "data.bin": execFileSync("head", ["-c", "200000", "/dev/urandom"]) });
      await snapshotIn(repo, { message: `s${i}` }, "repo");
    }
    const measured = repo.ok("--store", "repo", "gc");
    // Ten blobs of 200 KB that nothing but the snapshots reaches.
    expect(measured.bytesBefore).toBeGreaterThan(10 * 200_000);
    expect(measured.dropped).toEqual([]);
    repo.write({ ".ghostcommit.json": '{"maxStoreBytes": 700000}\n' });
    const report = repo.ok("--store", "repo", "gc");
    expect(report.dropped).toHaveLength(7);
    expect(report.bytesAfter).toBeLessThanOrEqual(700_000);
    expect(repo.ok("--store", "repo", "list").map((s: { message: string }) => s.message)).toEqual([
      "s9",
      "s8",
      "s7",
    ]);
  });
});
