import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Journal } from "../../src/session/journal.js";
import { writeFileAtomic } from "../../src/store/layout.js";
import { Sandbox } from "../helpers/repo.js";
import { workDigest } from "../helpers/support.js";
import { listIn, logIn } from "../helpers/in-process.js";

// The repository and the data dir on an 8 MiB tmpfs: a full disk under the store, for real, on
// the repository's file system (so borrowed objects are linked as usual). Mounting needs root
// (as on the machines this suite runs on); elsewhere the test is skipped.
const sandbox = new Sandbox();
const disk = sandbox.dir("disk");
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", disk]).status === 0;
const data = path.join(disk, "data");
sandbox.env.GHOSTCOMMIT_HOME = data;
afterAll(() => {
  if (mounted) spawnSync("umount", [disk]);
  sandbox.cleanup();
});

/** Every file under the store whose name marks it as a temp file of an object or pack write. */
function leftovers(dir: string): string[] {
  const found: string[] = [];
  const visit = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (/^tmp_(obj|pack)_gc_/.test(entry.name)) found.push(full);
    }
  };
  visit(dir);
  return found;
}

/**
 * Empties the disk of what earlier tests left (their repositories and stores): a test that fills
 * the disk to a margin and then needs room again must not depend on how much they took.
 */
function freshDisk(): void {
  for (const entry of readdirSync(disk)) rmSync(path.join(disk, entry), { recursive: true, force: true });
}

describe("a full disk under the store", () => {
  (mounted ? it : it.skip)(
    "a snapshot fails with a clear error, leaves nothing half-written, and the next one works",
    () => {
      const repo = sandbox.repo("disk/repo", { "README.md": "hello\n", "src/a.ts": "a\n" });
      const first = repo.ok("snapshot");
      const before = workDigest(repo.dir);

      // 40 files of incompressible content in 40 directories (5 MiB): their pack would need as much
      // again, more than is left.
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < 40; i++) files[`gen/d${i}/blob.bin`] = randomBytes(128 * 1024);
      repo.write(files);
      const failed = repo.cli(["snapshot", "--json"]);
      expect(failed.status).toBe(1);
      expect(failed.stderr).toMatch(
        /^ghostcommit: cannot write the objects of this capture to \/.*\/objects\/pack: no space left on the device \(ENOSPC\)$/m,
      );
      expect(failed.json?.error?.code).toBe("io");
      expect(leftovers(data)).toEqual([]);
      for (const [rel, content] of Object.entries(files))
        expect(repo.path(rel) && content.length).toBe(128 * 1024);
      expect(
        execFileSync("git", ["status", "--porcelain"], { cwd: repo.dir, env: sandbox.env }).toString(),
      ).toBe("?? gen/\n");

      // Three large files instead: each is written loose (too big to hold), and one fails.
      repo.remove("gen");
      repo.write({
        "big/1.bin": randomBytes(1536 * 1024),
        "big/2.bin": randomBytes(1536 * 1024),
        "big/3.bin": randomBytes(1536 * 1024),
      });
      const looseFailed = repo.cli(["snapshot", "--json"]);
      expect(looseFailed.status).toBe(1);
      expect(looseFailed.stderr).toMatch(
        /^ghostcommit: cannot write an object to \/.*\/objects\/[0-9a-f]{2}: no space left on the device \(ENOSPC\)$/m,
      );
      expect(leftovers(data)).toEqual([]);

      // Space again: the next snapshot and a restore work, and the store is sound.
      repo.remove("big");
      repo.write({ "src/a.ts": "edited\n" });
      const next = repo.ok("snapshot");
      expect(next.id).not.toBe(first.id);
      repo.ok("restore", first.id);
      expect(workDigest(repo.dir)).toEqual(before);
      expect(repo.cli(["doctor", "--json"]).json.ok).toBe(true);
    },
  );

  (mounted ? it : it.skip)(
    "a snapshot's ref that cannot be written is named, and no lock of it stays",
    () => {
      const repo = sandbox.repo("disk/ref", { "a.txt": "a\n" });
      const first = repo.ok("snapshot").id;
      const refs = path.join(repo.ok("doctor").store, "git", "refs", "ghostcommit", "snapshots");
      // The refs' directory alone full: the capture's objects are written, its ref is not.
      const saved = readdirSync(refs);
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=4k", "tmpfs", refs]).status).toBe(0);
      try {
        for (const name of saved) writeFileSync(path.join(refs, name), `${first}\n`);
        spawnSync("dd", ["if=/dev/zero", `of=${path.join(refs, ".filler")}`, "bs=4k"], { stdio: "ignore" });
        repo.write({ "a.txt": "b\n" });
        const failed = repo.cli(["snapshot"]);
        expect(failed.status).toBe(1);
        expect(failed.stderr).toMatch(
          /^ghostcommit: cannot write the snapshot's ref \/.*\/refs\/ghostcommit\/snapshots\/[0-9a-f]{40}: no space left on the device \(ENOSPC\)$/m,
        );
        expect(readdirSync(refs).sort()).toEqual([".filler", ...saved]);
      } finally {
        spawnSync("umount", [refs]);
      }
      expect(repo.ok("snapshot").id).not.toBe(first);
    },
  );

  (mounted ? it : it.skip)(
    "a lock that cannot be written names its directory and leaves no empty or temp lock file",
    () => {
      const repo = sandbox.repo("disk/locks", { "a.txt": "a\n" });
      repo.ok("turn", "begin", "--session", "f", "--turn", "1");
      repo.write({ "a.txt": "b\n" });
      repo.ok("turn", "end", "--session", "f", "--turn", "1");
      const store = repo.ok("doctor").store as string;
      const filler = path.join(disk, "lock-filler");
      spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=4k"], { stdio: "ignore" });
      try {
        for (const args of [["rewind", "--to", "1"], ["snapshot"]]) {
          const failed = repo.cli(args);
          expect(failed.status).toBe(1);
          expect(failed.stderr).toMatch(
            /^ghostcommit: cannot \S.* \/.*: no space left on the device \(ENOSPC\)$/m,
          );
        }
        const left: string[] = [];
        const visit = (at: string) => {
          for (const entry of readdirSync(at, { withFileTypes: true })) {
            const full = path.join(at, entry.name);
            if (entry.isDirectory()) visit(full);
            else if (/\.new-|\.lock$|\.ghostlock$/.test(entry.name)) left.push(full);
          }
        };
        visit(store);
        expect(left).toEqual([]);
      } finally {
        execFileSync("rm", ["-f", filler]);
      }
      expect(repo.cli(["rewind", "--to", "1"]).status).toBe(0);
      expect(repo.read("a.txt")).toBe("a\n");
    },
  );

  (mounted ? it : it.skip)(
    "gc on a full disk says so as every full-disk error does; the snapshots it keeps stay whole and the next gc packs",
    async () => {
      const repo = sandbox.repo("disk/gc", { "a.txt": "a\n" });
      // Each snapshot also holds its own version of a large file (stored loose, as large files are).
      const large: string[] = [];
      for (let i = 0; i < 4; i++) {
        repo.write({ [`r${i}.bin`]: randomBytes(60_000).toString("base64") });
        repo.write({ "large.bin": randomBytes(300_000).toString("base64") });
        large.push(repo.git("hash-object", "large.bin").trim());
        repo.ok("snapshot");
      }
      const before = workDigest(repo.dir);
      const storeGit = path.join(repo.ok("doctor").store as string, "git");
      const inStore = (oid: string) =>
        spawnSync("git", ["--git-dir", storeGit, "cat-file", "-e", oid], { env: sandbox.env }).status === 0;
      expect(large.map(inStore)).toEqual([true, true, true, true]);
      // Room for gc's locks and state files, none for a new pack of the kept snapshots.
      const filler = path.join(disk, "gc-filler");
      const { bavail, bsize } = statfsSync(disk);
      writeFileSync(filler, Buffer.alloc(bavail * bsize - 32 * 1024));
      try {
        const failed = repo.cli(["gc", "--keep", "2"]);
        expect(failed.status).toBe(1);
        expect(failed.stderr).toMatch(
          /^ghostcommit: cannot write to \/.*: no space left on the device \(ENOSPC\)$/m,
        );
        expect(failed.stderr).not.toMatch(/tmp_pack|exit 128|Out of diskspace/);
        // Its failed repack's temp pack is gone: left, it would take the little room there is.
        const packDir = path.join(data, "workspaces");
        const temps = (readdirSync(packDir, { recursive: true }) as string[]).filter((name) =>
          /(^|\/)(tmp_pack_|\.tmp-\d+-pack-)/.test(name),
        );
        expect(temps).toEqual([]);
        // What only the dropped snapshots held is freed all the same (pruning needs no room), so
        // a store that filled its own disk is not stuck there (found in a trial).
        expect(large.map(inStore)).toEqual([false, false, true, true]);
      } finally {
        execFileSync("rm", ["-f", filler]);
      }
      const kept = await listIn(repo);
      expect(kept).toHaveLength(2);
      expect(repo.ok("gc").kept).toHaveLength(2);
      repo.ok("restore", kept[1].id);
      repo.ok("restore", kept[0].id);
      expect(workDigest(repo.dir)).toEqual(before);
      expect(repo.cli(["doctor", "--json"]).json.ok).toBe(true);
    },
  );

  (mounted ? it : it.skip)(
    "gc on a disk with no room left at all makes room from its caches and frees a dropped snapshot's large file",
    () => {
      // Found checking the fix above: with no block free, gc could not even write its lock.
      const repo = sandbox.repo("disk/gc-full", { "a.txt": "a\n" });
      repo.write({ "large.bin": randomBytes(300_000).toString("base64") });
      const large = repo.git("hash-object", "large.bin").trim();
      const dropped = repo.ok("snapshot").id;
      rmSync(repo.path("large.bin"));
      repo.write({ "a.txt": "b\n" });
      const kept = repo.ok("snapshot").id;
      const storeGit = path.join(repo.ok("doctor").store as string, "git");
      const inStore = (oid: string) =>
        spawnSync("git", ["--git-dir", storeGit, "cat-file", "-e", oid], { env: sandbox.env }).status === 0;
      expect(inStore(large)).toBe(true);
      repo.ok("drop", dropped);
      const filler = path.join(disk, "gc-full-filler");
      spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=4k"], { stdio: "ignore" });
      try {
        expect(statfsSync(disk).bavail).toBe(0);
        const run = repo.cli(["gc"]);
        expect([0, 1]).toContain(run.status);
        if (run.status === 1)
          expect(run.stderr).toMatch(
            /^ghostcommit: cannot write .*: no space left on the device \(ENOSPC\)$/m,
          );
        expect(inStore(large)).toBe(false);
      } finally {
        execFileSync("rm", ["-f", filler]);
      }
      expect(repo.ok("gc").kept).toEqual([kept]);
      rmSync(repo.path("a.txt"));
      repo.ok("restore", kept);
      expect(repo.read("a.txt")).toBe("b\n");
    },
  );

  (mounted ? it : it.skip)(
    "a restore that runs out of room writes every file that fits, says why for each it could not write, and loses nothing",
    () => {
      // Small files are written beside the large one: its temp file takes the last room while
      // they are written, and is removed when it fails; they must be written all the same.
      const small = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`s${i}.txt`, `s${i}\n`]));
      freshDisk();
      const repo = sandbox.repo("disk/restore", { "a.txt": "a\n", ...small });
      repo.write({ "big.bin": randomBytes(1 << 20) });
      const target = repo.ok("snapshot").id;
      repo.remove("big.bin");
      repo.write({
        "a.txt": "edited\n",
        ...Object.fromEntries(Object.keys(small).map((rel) => [rel, "edited\n"])),
      });
      // Room for the safety snapshot (small files changed), none for the 1 MiB file.
      const filler = path.join(disk, "restore-filler");
      const { bavail, bsize } = statfsSync(disk);
      writeFileSync(filler, Buffer.alloc(bavail * bsize - 256 * 1024));
      try {
        const failed = repo.cli(["restore", target, "--json"]);
        expect(failed.status, failed.stderr).toBe(1);
        expect(failed.json.skipped).toEqual([{ path: "big.bin", reason: "io", errno: "ENOSPC" }]);
        expect(failed.json.written).toEqual(["a.txt", ...Object.keys(small)]);
        for (const [rel, content] of Object.entries(small)) expect(repo.read(rel)).toBe(content);
        const human = repo.cli(["restore", target]);
        expect(human.stdout).toContain("big.bin (io: no space left on the device (ENOSPC))");
        expect(readdirSync(repo.dir).sort()).toEqual([".git", "a.txt", ...Object.keys(small)]);
      } finally {
        execFileSync("rm", ["-f", filler]);
      }
      repo.ok("restore", target);
      expect(readFileSync(repo.path("big.bin")).length).toBe(1 << 20);
    },
  );

  (mounted ? it : it.skip)(
    "a rewind that runs out of room is finished by running it again once there is room, or undone by redo",
    async () => {
      freshDisk();
      const repo = sandbox.repo("disk/rewind", { "a.txt": "a\n" });
      repo.write({ "big.bin": randomBytes(1 << 20) });
      repo.ok("turn", "begin", "--session", "s", "--turn", "1");
      repo.remove("big.bin");
      repo.write({ "a.txt": "edited\n" });
      repo.ok("turn", "end", "--session", "s", "--turn", "1");
      const rewind = ["rewind", "--session", "s", "--to", "1"];
      const filler = path.join(disk, "rewind-filler");
      const { bavail, bsize } = statfsSync(disk);
      writeFileSync(filler, Buffer.alloc(bavail * bsize - 256 * 1024));
      try {
        // One try only: a second, while the disk is still full, may fail sooner (its own safety snapshot).
        const failed = repo.cli(rewind);
        expect(failed.status, failed.stderr).toBe(1);
        expect(failed.stdout).toContain("big.bin (io: no space left on the device (ENOSPC))");
        expect(failed.stdout).toContain(
          "not finished: `ghostcommit rewind --session s --to 1` finishes it once those files can be written",
        );
      } finally {
        execFileSync("rm", ["-f", filler]);
      }
      // Doctor names it, with the way on, until it is finished.
      const doctor = repo.cli(["doctor", "--json"]);
      expect(doctor.status).toBe(1);
      expect(doctor.json.problems).toEqual([
        expect.objectContaining({
          code: "unfinished-rewind",
          message: expect.stringContaining("`ghostcommit rewind --session s --to 1` finishes it"),
        }),
      ]);
      const finished = repo.ok(...rewind);
      expect(repo.cli(["doctor", "--json"]).json.ok).toBe(true);
      expect(finished.resumed).toBe(true);
      expect([readFileSync(repo.path("big.bin")).length, repo.read("a.txt")]).toEqual([1 << 20, "a\n"]);
      expect((await logIn(repo, "s"))[0].state).toBe("rewound");
      repo.ok("redo", "--session", "s");
      expect([repo.exists("big.bin"), repo.read("a.txt")]).toEqual([false, "edited\n"]);
    },
  );

  (mounted ? it : it.skip)(
    "a redo that runs out of room stays to do: the next redo, once there is room, finishes it",
    async () => {
      freshDisk();
      const repo = sandbox.repo("disk/redo", { "a.txt": "a\n" });
      repo.ok("turn", "begin", "--session", "s", "--turn", "1");
      const big = randomBytes(1 << 20);
      repo.write({ "big.bin": big, "a.txt": "edited\n" });
      repo.ok("turn", "end", "--session", "s", "--turn", "1");
      repo.ok("rewind", "--session", "s", "--to", "1");
      expect([repo.exists("big.bin"), repo.read("a.txt")]).toEqual([false, "a\n"]);
      const filler = path.join(disk, "redo-filler");
      const { bavail, bsize } = statfsSync(disk);
      writeFileSync(filler, Buffer.alloc(bavail * bsize - 256 * 1024));
      try {
        const failed = repo.cli(["redo", "--session", "s"]);
        expect(failed.status, failed.stderr).toBe(1);
        expect(failed.stdout).toContain("big.bin (io: no space left on the device (ENOSPC))");
        expect(failed.stdout).toContain(
          "not finished: `ghostcommit redo --session s` finishes it once those files can be written",
        );
      } finally {
        execFileSync("rm", ["-f", filler]);
      }
      // Still a rewind to redo, not one redone already (which left its work for good).
      expect((await logIn(repo, "s"))[0].state).toBe("rewound");
      repo.ok("redo", "--session", "s");
      expect([readFileSync(repo.path("big.bin")).equals(big), repo.read("a.txt")]).toEqual([
        true,
        "edited\n",
      ]);
      expect((await logIn(repo, "s"))[0].state).toBe("done");
    },
  );

  (mounted ? it : it.skip)(
    "a plain directory's large file that does not fit leaves no temp object of git's taking the room",
    () => {
      freshDisk();
      // The folder elsewhere, its store on the small disk: git adds a large file as a loose object.
      const dir = sandbox.dir("plain-large");
      writeFileSync(path.join(dir, "a.txt"), "a\n");
      writeFileSync(path.join(dir, "first.bin"), randomBytes(5 * 1024 * 1024));
      expect(sandbox.cli(dir, ["snapshot"]).status).toBe(0);
      writeFileSync(path.join(dir, "second.bin"), randomBytes(3584 * 1024));
      expect(sandbox.cli(dir, ["snapshot"]).status).toBe(1);
      // Before, git's tmp_obj_XXXXXX stayed in the objects' fan-out directory, holding the room, and
      // every later snapshot failed with ENOSPC until it was deleted by hand.
      const temps = (readdirSync(data, { recursive: true }) as string[]).filter((f) =>
        /(^|\/)tmp_obj_/.test(f),
      );
      expect(temps).toEqual([]);
      rmSync(path.join(dir, "second.bin"));
      writeFileSync(path.join(dir, "a.txt"), "a2\n");
      expect(sandbox.cli(dir, ["snapshot"]).status).toBe(0);
      rmSync(dir, { recursive: true });
    },
  );

  (mounted ? it : it.skip)(
    "a state file that cannot be replaced keeps its old content, with no temp file left beside it",
    async () => {
      const dir = path.join(disk, "state");
      execFileSync("mkdir", ["-p", dir]);
      const file = path.join(dir, "cache.json");
      writeFileSync(file, '{"old":true}');
      // Fill what is left of the disk, then ask for a larger content than the last few bytes.
      const filler = path.join(dir, "filler");
      spawnSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
      try {
        // As one content, and in parts (written together: the blob size table).
        const contents = ["x".repeat(256 * 1024), [Buffer.alloc(100 * 1024, 1), Buffer.alloc(156 * 1024, 2)]];
        for (const content of contents) {
          for (const flush of [false, true]) {
            // The message names the file, not only the system's code.
            await expect(writeFileAtomic(file, content, 0o600, flush)).rejects.toThrow(
              `cannot write ${file}: no space left on the device (ENOSPC)`,
            );
            expect(readFileSync(file, "utf8")).toBe('{"old":true}');
            expect(readdirSync(dir).sort()).toEqual(["cache.json", "filler"]);
          }
        }
        // A session's journal too (a turn's end, a rewind's record), flushed or not.
        const journal = new Journal(dir, "s");
        for (const durable of [false, true]) {
          await expect(
            journal.append(
              [{ e: "mark", turn: "1", tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".repeat(100) }],
              durable,
            ),
          ).rejects.toThrow(
            `cannot write session journal ${journal.file}: no space left on the device (ENOSPC)`,
          );
        }
      } finally {
        execFileSync("rm", ["-rf", dir]);
      }
    },
  );
});
