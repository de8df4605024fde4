import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyCli, Sandbox } from "../helpers/repo.js";
import { storeDir } from "./helpers.js";

let sb: Sandbox;
beforeEach(() => {
  sb = new Sandbox();
});
afterEach(() => sb.cleanup());

/**
 * A copy of the bundled CLI inside the sandbox, for uid 65534 to run (the checkout itself may sit
 * in a directory only root can enter); the test is skipped where that user cannot run Node.
 */
function cliForOtherUser(ctx: { skip: (note?: string) => void }): string {
  if (spawnSync(process.execPath, ["-e", "0"], { uid: 65534, gid: 65534 }).status !== 0) {
    ctx.skip(`${process.execPath} cannot be run by uid 65534`);
  }
  return copyCli(sb.dir("cli"));
}

/** Runs that copy of the CLI as uid 65534 in `cwd` (with --json unless `trailing` says otherwise). */
function asNobody(cli: string, cwd: string, trailing = ["--json"]) {
  return (args: string[]) =>
    spawnSync(process.execPath, [cli, ...args, ...trailing], {
      cwd,
      env: sb.env,
      uid: 65534,
      gid: 65534,
      encoding: "utf8",
    });
}

describe("hostile trees", () => {
  it("symlinks to /, to a parent and in loops, FIFOs and sockets: captured as links or skipped; nothing outside is touched", async () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    const canary = path.join(sb.home, "canary.txt");
    writeFileSync(canary, "outside\n");
    repo.symlink("/", "to-root");
    repo.symlink("..", "to-parent");
    repo.symlink(canary, "to-canary");
    repo.symlink("loop-b", "loop-a");
    repo.symlink("loop-a", "loop-b");
    spawnSync("mkfifo", [repo.path("fifo")]);
    const server = net.createServer().listen(repo.path("sock"));
    await new Promise((r) => server.once("listening", r));
    try {
      const snap = repo.ok("snapshot");
      const files: string[] = repo.ok("show", snap.id).files;
      expect(files).toEqual(
        expect.arrayContaining(["to-root", "to-parent", "to-canary", "loop-a", "loop-b"]),
      );
      expect(files).not.toContain("fifo");
      expect(files).not.toContain("sock");
      // Replace the links by directories holding files, then restore: the links come back,
      // the canary (and / and the parent) are never written through.
      for (const link of ["to-root", "to-parent", "to-canary"]) {
        rmSync(repo.path(link));
        repo.write({ [`${link}/planted.txt`]: "agent wrote this\n" });
      }
      const restored = repo.cli(["restore", snap.id, "--json"]);
      expect(restored.status, restored.stderr).toBe(0);
      expect(readlinkSync(repo.path("to-root"))).toBe("/");
      expect(readlinkSync(repo.path("to-canary"))).toBe(canary);
      expect(readFileSync(canary, "utf8")).toBe("outside\n");
      expect(lstatSync(repo.path("fifo")).isFIFO()).toBe(true);
      // A link pointing at a directory outside, with a snapshot that holds files "below" it: the
      // restore must not write through the link.
      rmSync(repo.path("to-parent"));
      mkdirSync(repo.path("to-parent"));
      repo.write({ "to-parent/canary.txt": "captured inside\n" });
      const inside = repo.ok("snapshot").id;
      rmSync(repo.path("to-parent"), { recursive: true });
      symlinkSync(sb.home, repo.path("to-parent"));
      const through = repo.cli(["restore", inside, "--json"]);
      // The link is replaced (unlinked, never followed) by the directory the snapshot holds.
      expect(through.status, through.stdout).toBe(0);
      expect(lstatSync(repo.path("to-parent")).isDirectory()).toBe(true);
      expect(readFileSync(repo.path("to-parent/canary.txt"), "utf8")).toBe("captured inside\n");
      expect(readFileSync(canary, "utf8")).toBe("outside\n");
    } finally {
      server.close();
    }
  });

  it("255-byte names, paths past PATH_MAX, 100 levels of nesting, a file replaced by a directory and back", () => {
    const repo = sb.repo("ws", { "a.txt": "one\n" });
    const long = "n".repeat(255);
    repo.write({ [long]: "long name\n" });
    const deep = Array.from({ length: 100 }, (_, i) => `d${i}`).join("/");
    repo.write({ [`${deep}/leaf.txt`]: "deep\n" });
    // 16 levels of 250-byte names: over 4,000 bytes relative, over PATH_MAX absolute.
    const huge = Array.from({ length: 16 }, (_, i) => `${i}`.padEnd(250, "x")).join("/");
    spawnSync("bash", [
      "-c",
      `cd ${JSON.stringify(repo.dir)} && for p in $(echo ${JSON.stringify(huge)} | tr / ' '); do mkdir $p && cd $p; done && echo far > f`,
    ]);
    repo.write({ swap: "file first\n" });
    const first = repo.cli(["snapshot", "--json"]);
    expect(first.status, first.stderr).toBe(0);
    const files: string[] = repo.ok("show", first.json.id).files;
    expect(files).toEqual(expect.arrayContaining([long, `${deep}/leaf.txt`, "swap"]));
    rmSync(repo.path("swap"));
    repo.write({ "swap/inner.txt": "now a directory\n" });
    const second = repo.ok("snapshot").id;
    expect(repo.ok("restore", first.json.id).written).toContain("swap");
    expect(readFileSync(repo.path("swap"), "utf8")).toBe("file first\n");
    repo.ok("restore", second);
    expect(readFileSync(repo.path("swap/inner.txt"), "utf8")).toBe("now a directory\n");
    rmSync(repo.path(long));
    rmSync(repo.path("d0"), { recursive: true });
    const back = repo.cli(["restore", first.json.id, "--json"]);
    expect([0, 1]).toContain(back.status); // a path past PATH_MAX may be skipped (reported), never fatal
    expect(readFileSync(repo.path(long), "utf8")).toBe("long name\n");
    expect(readFileSync(repo.path(`${deep}/leaf.txt`), "utf8")).toBe("deep\n");
  });

  // Needs root to switch to another user (uid 65534): root may write anywhere.
  it.skipIf(process.getuid?.() !== 0)(
    "a store this user cannot write to: doctor reports it, naming the directory, as every snapshot fails",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("read-only-store", { "a.txt": "one\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, repo.dir);
      expect(run(["snapshot"]).status).toBe(0);
      expect(JSON.parse(run(["doctor"]).stdout).ok).toBe(true);
      const store = storeDir(sb);
      spawnSync("chmod", ["-R", "a-w", store]);
      writeFileSync(repo.path("a.txt"), "two\n");
      const snap = run(["snapshot"]);
      expect(snap.status).toBe(1);
      expect(snap.stderr).toMatch(/^ghostcommit: .*permission denied \(EACCES\)/);
      const doctor = run(["doctor"]);
      expect(doctor.status).toBe(1);
      expect(JSON.parse(doctor.stdout).problems).toContainEqual({
        code: "store-not-writable",
        message: `${store} cannot be written to (EACCES): every snapshot, restore and drop fails until this user may write there`,
        path: store,
      });
      spawnSync("chmod", ["-R", "u+w", store]);
      expect(JSON.parse(run(["doctor"]).stdout).ok).toBe(true);
      expect(run(["snapshot"]).status).toBe(0);
      // Nothing of a link that failed is left in the store (a pack's .keep is written first).
      const packs = path.join(storeDir(sb, repo.dir), "git", "objects", "pack");
      expect(existsSync(packs) ? readdirSync(packs).filter((n) => n.endsWith(".keep")) : []).toEqual([]);
    },
  );

  // Needs root to switch to another user (uid 65534): root may write anywhere.
  it.skipIf(process.getuid?.() !== 0)(
    "drop in a store this user cannot write to names the file and the cause, not git's command line; the snapshot stays",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("read-only-drop", { "a.txt": "one\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, repo.dir, []);
      const id = JSON.parse(run(["snapshot", "--json"]).stdout).id;
      const store = storeDir(sb);
      spawnSync("chmod", ["-R", "a-w", store]);
      const drop = run(["drop", id]);
      expect(drop.status).toBe(1);
      const ref = path.join(store, "git/refs/ghostcommit/snapshots", id);
      expect(drop.stderr).toBe(`ghostcommit: cannot write ${ref}: permission denied (EACCES)\n`);
      const json = JSON.parse(run(["drop", id, "--json"]).stdout);
      expect(json.error).toEqual({ code: "io", message: `cannot write ${ref}: permission denied (EACCES)` });
      expect(JSON.parse(run(["list", "--json"]).stdout).map((s: { id: string }) => s.id)).toEqual([id]);
    },
  );

  // Needs root to switch to another user, and the kernel's hard-link protection (Linux's default).
  const protectedHardlinks = existsSync("/proc/sys/fs/protected_hardlinks")
    ? readFileSync("/proc/sys/fs/protected_hardlinks", "utf8").trim() === "1"
    : false;
  it.skipIf(process.getuid?.() !== 0 || !protectedHardlinks)(
    "snapshots a repository another user owns, which it may read but not hard-link; doctor says so",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("theirs", { "a.txt": "one\n", "b.txt": "two\n" });
      repo.git("gc", "-q");
      repo.write({ "c.txt": "three\n" });
      repo.git("add", "c.txt"); // a loose object beside the pack
      writeFileSync(sb.env.GIT_CONFIG_GLOBAL!, "[safe]\n\tdirectory = *\n");
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      spawnSync("chown", ["-R", "0:0", repo.dir]);
      const run = asNobody(cli, repo.dir);
      const snap = run(["snapshot"]);
      expect(snap.status, snap.stderr).toBe(0);
      expect(JSON.parse(snap.stdout).fileCount).toBe(3);
      const shown = JSON.parse(run(["show", JSON.parse(snap.stdout).id]).stdout);
      expect(shown.files).toEqual(["a.txt", "b.txt", "c.txt"]);
      // The repo store is offered only to a user who may write the repository's objects.
      const problem = (fix: string) => ({
        code: "borrowed-unprotected",
        message: `the repository's object files are another user's, which this user may not hard-link: objects borrowed from it are not protected from its gc (${fix})`,
      });
      expect(JSON.parse(run(["doctor"]).stdout).problems).toEqual([problem("run as the repository's owner")]);
      spawnSync("find", [
        path.join(repo.dir, ".git/objects"),
        "-type",
        "d",
        "-exec",
        "chmod",
        "a+w",
        "{}",
        "+",
      ]);
      expect(JSON.parse(run(["doctor"]).stdout).problems).toEqual([
        problem('run as the repository\'s owner, or use the repo store ("store": "repo")'),
      ]);
      expect(run(["snapshot"]).status).toBe(0);
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "an unreadable file is excluded as unreadable and left alone (run as an unprivileged user)",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const dir = sb.dir("plain");
      writeFileSync(path.join(dir, "ok.txt"), "fine\n");
      writeFileSync(path.join(dir, "secret.txt"), "root only\n");
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      chownSync(path.join(dir, "secret.txt"), 0, 0);
      chmodSync(path.join(dir, "secret.txt"), 0o600);
      const run = asNobody(cli, dir);
      const snap = run(["snapshot"]);
      expect(snap.status, snap.stderr).toBe(0);
      const json = JSON.parse(snap.stdout);
      expect(json.excluded).toContainEqual(
        expect.objectContaining({ path: "secret.txt", reason: "unreadable" }),
      );
      writeFileSync(path.join(dir, "ok.txt"), "changed\n");
      const restored = run(["restore", json.id]);
      expect(restored.status, restored.stderr).toBe(0);
      expect(readFileSync(path.join(dir, "ok.txt"), "utf8")).toBe("fine\n");
      expect(readFileSync(path.join(dir, "secret.txt"), "utf8")).toBe("root only\n");
      expect(existsSync(path.join(dir, "secret.txt"))).toBe(true);
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "leaves another user's file it may not write as it is (permission), neither replaced nor deleted, as its dry run says",
    (ctx) => {
      // Found in a trial: the restore renamed its own file over another user's read-only-to-it
      // file in a folder it owns, which made the file its own.
      const cli = cliForOtherUser(ctx);
      const dir = sb.dir("plain-shared");
      writeFileSync(path.join(dir, "mine.md"), "mine v1\n");
      writeFileSync(path.join(dir, "theirs.md"), "theirs v1\n");
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      chownSync(path.join(dir, "theirs.md"), 0, 0);
      chmodSync(path.join(dir, "theirs.md"), 0o644);
      const run = asNobody(cli, dir);
      const snap = JSON.parse(run(["snapshot"]).stdout);
      writeFileSync(path.join(dir, "mine.md"), "mine v2\n");
      writeFileSync(path.join(dir, "theirs.md"), "theirs v2\n");
      // Made since by the other user, in a folder this one owns: not taken away either.
      writeFileSync(path.join(dir, "theirs-new.md"), "theirs, new\n");
      chownSync(path.join(dir, "theirs-new.md"), 0, 0);
      const protectedOnes = [
        expect.objectContaining({ path: "theirs-new.md", reason: "permission" }),
        expect.objectContaining({ path: "theirs.md", reason: "permission" }),
      ];
      // The dry run says what the restore will do.
      const preview = run(["restore", snap.id, "--dry-run"]);
      expect(preview.status).toBe(1);
      expect(JSON.parse(preview.stdout)).toMatchObject({ written: ["mine.md"], deleted: [] });
      expect(
        JSON.parse(preview.stdout).skipped.sort((a: any, b: any) => a.path.localeCompare(b.path)),
      ).toEqual(protectedOnes);
      const restored = run(["restore", snap.id]);
      expect(restored.status).toBe(1);
      const report = JSON.parse(restored.stdout);
      expect(report).toMatchObject({ written: ["mine.md"], deleted: [] });
      expect(report.skipped.sort((a: any, b: any) => a.path.localeCompare(b.path))).toEqual(protectedOnes);
      expect(readFileSync(path.join(dir, "theirs.md"), "utf8")).toBe("theirs v2\n");
      expect(lstatSync(path.join(dir, "theirs.md")).uid).toBe(0);
      expect(readFileSync(path.join(dir, "theirs-new.md"), "utf8")).toBe("theirs, new\n");
      expect(readFileSync(path.join(dir, "mine.md"), "utf8")).toBe("mine v1\n");
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "one unreadable file in a plain directory costs one more git call, not one per file",
    (ctx) => {
      // Found in a trial: git's update-index stops at a file it cannot read, and the snapshot then
      // added every file with a git call of its own (minutes for a folder of 20k files).
      const cli = cliForOtherUser(ctx);
      const dir = sb.dir("plain-many");
      for (let i = 0; i < 300; i++) writeFileSync(path.join(dir, `n${i}.md`), `note ${i}\n`);
      writeFileSync(path.join(dir, "locked.bin"), "root only\n");
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      chmodSync(path.join(dir, "locked.bin"), 0o000);
      const traced = (args: string[]) => {
        const result = spawnSync(process.execPath, [cli, ...args, "--json"], {
          cwd: dir,
          env: { ...sb.env, GHOSTCOMMIT_TRACE: "1" },
          uid: 65534,
          gid: 65534,
          encoding: "utf8",
        });
        expect(result.status, result.stderr).toBe(0);
        const adds = result.stderr.split("\n").filter((line) => /git update-index -z --add/.test(line));
        return { json: JSON.parse(result.stdout), adds: adds.length };
      };
      const first = traced(["snapshot"]);
      expect(first.json.excluded).toContainEqual(
        expect.objectContaining({ path: "locked.bin", reason: "unreadable" }),
      );
      expect(first.json.fileCount).toBe(300);
      expect(first.adds).toBeLessThanOrEqual(2);
      // A later snapshot with many new files, the unreadable one still there, and a second one.
      for (let i = 0; i < 200; i++) writeFileSync(path.join(dir, `m${i}.md`), `more ${i}\n`);
      writeFileSync(path.join(dir, "locked2.bin"), "root only\n");
      spawnSync("chown", ["-R", "65534:65534", dir]);
      chmodSync(path.join(dir, "locked2.bin"), 0o000);
      const later = traced(["snapshot"]);
      expect(later.json.fileCount).toBe(500);
      expect(
        later.json.excluded
          .filter((e: any) => e.reason === "unreadable")
          .map((e: any) => e.path)
          .sort(),
      ).toEqual(["locked.bin", "locked2.bin"]);
      expect(later.adds).toBeLessThanOrEqual(2);
      // Everything readable was captured: a restore brings a deleted note back.
      rmSync(path.join(dir, "m7.md"));
      const restored = asNobody(cli, dir)(["restore", later.json.id]);
      expect(restored.status, restored.stderr).toBe(0);
      expect(readFileSync(path.join(dir, "m7.md"), "utf8")).toBe("more 7\n");
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "holds no committed content for tracked files it cannot reach, so a restore never writes that over an edit",
    (ctx) => {
      // Found in a trial: git could not stat them (`closed/` is 000), called them unchanged, and
      // the snapshot held HEAD's bytes for an edited file; restoring it wrote those over later work.
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("ws-unreachable-tracked", { "a.txt": "one\n", "closed/f.txt": "committed\n" });
      repo.write({ "closed/f.txt": "edited\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, repo.dir);
      const earlier = JSON.parse(run(["snapshot"]).stdout).id;
      chmodSync(repo.path("closed"), 0o000);
      // An earlier snapshot holds the file; the directory it goes in cannot be listed now, so
      // what is there is unknown: left, said as such, not tried and refused (status 1).
      for (const args of [["--dry-run"], []]) {
        const back = run(["restore", earlier, ...args, "--json"]);
        expect(back.status, back.stderr).toBe(0);
        expect(JSON.parse(back.stdout)).toMatchObject({
          written: [],
          skipped: [{ path: "closed/f.txt", reason: "excluded", detail: "unreadable" }],
        });
      }
      const snaps = [run(["snapshot"]), run(["snapshot"])].map((r) => {
        expect(r.status, r.stderr).toBe(0);
        return JSON.parse(r.stdout);
      });
      for (const snap of snaps) {
        // The directory, or the file git could not stat in it (git 2.39 warns of the file only).
        expect(snap.excluded.length).toBeGreaterThan(0);
        for (const e of snap.excluded)
          expect([e.path.split("/")[0], e.reason]).toEqual(["closed", "unreadable"]);
        expect(snap.fileCount).toBe(1);
      }
      chmodSync(repo.path("closed"), 0o700);
      repo.write({ "closed/f.txt": "later work\n" });
      const restored = run(["restore", snaps[1].id, "--json"]);
      expect(restored.status, restored.stderr).toBe(0);
      expect(JSON.parse(restored.stdout).written).toEqual([]);
      expect(repo.read("closed/f.txt")).toBe("later work\n");
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "directories it may not search or not list are reported unreadable, and a restore deletes nothing in them",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("ws-unreadable-dirs", { "a.txt": "one\n" });
      repo.write({ "listable/f": "x\n", "closed/f": "secret\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      chmodSync(repo.path("listable"), 0o600); // its names can be read, its files not reached
      chmodSync(repo.path("closed"), 0o000);
      const run = asNobody(cli, repo.dir);
      const snap = run(["snapshot"]);
      expect(snap.status, snap.stderr).toBe(0);
      const json = JSON.parse(snap.stdout);
      expect(json.excluded).toEqual([
        { path: "closed", reason: "unreadable" },
        { path: "listable/f", reason: "unreadable" },
      ]);
      chmodSync(repo.path("listable"), 0o700);
      chmodSync(repo.path("closed"), 0o700);
      const restored = run(["restore", json.id]);
      expect(restored.status, restored.stderr).toBe(0);
      expect([repo.read("listable/f"), repo.read("closed/f")]).toEqual(["x\n", "secret\n"]);

      // A plain folder, first and later snapshot alike.
      const dir = sb.dir("plain-unreadable");
      writeFileSync(path.join(dir, "a.txt"), "a\n");
      mkdirSync(path.join(dir, "closed"));
      writeFileSync(path.join(dir, "closed", "f"), "secret\n");
      spawnSync("chown", ["-R", "65534:65534", dir]);
      chmodSync(path.join(dir, "closed"), 0o000);
      const inPlain = asNobody(cli, dir);
      const snaps = [inPlain(["snapshot"]), inPlain(["snapshot"])].map((r) => JSON.parse(r.stdout));
      for (const snap of snaps) expect(snap.excluded).toEqual([{ path: "closed", reason: "unreadable" }]);
      chmodSync(path.join(dir, "closed"), 0o700);
      expect(inPlain(["restore", snaps[0].id]).status).toBe(0);
      expect(readFileSync(path.join(dir, "closed", "f"), "utf8")).toBe("secret\n");
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "a rewind that may not write one file (permissions) ends without it; it is not left to finish",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("ws-protected", { "a.txt": "a\n", "locked/b.txt": "b\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, repo.dir, []);
      expect(run(["turn", "begin", "--session", "s", "--turn", "1"]).status).toBe(0);
      writeFileSync(repo.path("a.txt"), "a1\n");
      writeFileSync(repo.path("locked/b.txt"), "b1\n");
      writeFileSync(repo.path("locked/c.txt"), "c1\n"); // new: the rewind deletes it
      chownSync(repo.path("locked/c.txt"), 65534, 65534); // the user's own file, as the agent would make it
      expect(run(["turn", "end", "--session", "s", "--turn", "1"]).status).toBe(0);
      chownSync(repo.path("locked"), 0, 0); // the user cannot write in it any more
      const rewound = run(["rewind", "--session", "s", "--to", "1", "--json"]);
      expect(rewound.status).toBe(1);
      // Exit status 1 says what failed, on stderr as every failure does.
      expect(rewound.stderr).toBe(
        // A deletion that failed is no write that failed: both are left as they were.
        "ghostcommit: 2 paths were left as they were (permission), listed under skipped; the rest was done\n",
      );
      const before = JSON.parse(run(["log", "--session", "s", "--json"]).stdout)[0].before;
      expect(JSON.parse(rewound.stdout).skipped).toEqual([
        { path: "locked/c.txt", reason: "permission", errno: "EACCES", from: before },
        { path: "locked/b.txt", reason: "permission", errno: "EACCES", from: before },
      ]);
      expect([repo.read("a.txt"), repo.read("locked/c.txt")]).toEqual(["a\n", "c1\n"]);
      // Done, not pending: running it again does not try to finish it; redo undoes it as any rewind.
      expect(run(["rewind", "--session", "s", "--to", "1"]).stderr).toContain("is already rewound");
      expect(run(["redo", "--session", "s"]).status).toBe(0);
      expect(repo.read("a.txt")).toBe("a1\n");
      // Typed in an agent's chat (a slash command's line), whose reader sees stdout only: why the
      // rewind ended with status 1 is said there, before that status.
      const inChat = run(["--in-chat", "rewind", "--session", "s", "--to", "1"]);
      expect(inChat.status).toBe(0);
      expect(inChat.stdout).toMatch(
        /ghostcommit: 2 paths were left as they were \(permission\), listed under skipped; the rest was done\n\(ghostcommit exited with status 1\)\n$/,
      );
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "a rewind that may not write one file names the restore that puts it back once the permission is fixed",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("ws-protected-hint", { "x.txt": "x\n", "out/report.txt": "v1\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, repo.dir, []);
      expect(run(["turn", "begin", "--session", "s", "--turn", "1"]).status).toBe(0);
      writeFileSync(repo.path("x.txt"), "y\n");
      writeFileSync(repo.path("out/report.txt"), "v2\n");
      expect(run(["turn", "end", "--session", "s", "--turn", "1"]).status).toBe(0);
      chmodSync(repo.path("out"), 0o555); // a build step makes its output read-only
      // The dry run says so too (found in a trial: its plan wrote the file, status 0).
      const preview = run(["rewind", "--session", "s", "--to", "1", "--dry-run", "--json"]);
      expect(preview.status).toBe(1);
      expect(JSON.parse(preview.stdout)).toMatchObject({
        written: ["x.txt"],
        skipped: [{ path: "out/report.txt", reason: "permission", errno: "EACCES" }],
      });
      expect(preview.stderr).toBe(
        "ghostcommit: out/report.txt would be left as it is (permission), listed under skipped; nothing was changed\n",
      );
      expect(repo.read("x.txt")).toBe("y\n");
      const rewound = run(["rewind", "--session", "s", "--to", "1"]);
      expect(rewound.status).toBe(1);
      const hint = rewound.stdout.match(
        /\nnot rewound: once you can write it, `ghostcommit (restore [0-9a-f]{12} -- out\/report\.txt)` finishes the rewind for it \(writes or deletes what it meant to\)\n/,
      );
      expect(hint, rewound.stdout).not.toBeNull();
      chmodSync(repo.path("out"), 0o755); // the user fixes the permission
      const restored = run(hint![1].split(" "));
      expect(restored.status, restored.stderr).toBe(0);
      expect([repo.read("out/report.txt"), repo.read("x.txt")]).toEqual(["v1\n", "x\n"]);
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "an unreadable .ghostignore stops snapshot and restore: the secrets it names are never captured or overwritten",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const dir = sb.dir("plain-ignore");
      writeFileSync(path.join(dir, "ok.txt"), "fine\n");
      writeFileSync(path.join(dir, ".env"), "TOKEN=1\n");
      writeFileSync(path.join(dir, ".ghostignore"), ".env\n");
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, dir);
      const before = run(["snapshot"]);
      expect(before.status, before.stderr).toBe(0);
      writeFileSync(path.join(dir, ".env"), "TOKEN=2\n");
      chownSync(path.join(dir, ".ghostignore"), 0, 0);
      chmodSync(path.join(dir, ".ghostignore"), 0o600);
      const snap = run(["snapshot"]);
      expect(snap.status).toBe(1);
      expect(snap.stderr).toMatch(/ghostcommit: cannot read .*\.ghostignore: permission denied/);
      expect(JSON.parse(run(["list"]).stdout)).toHaveLength(1);
      const restored = run(["restore", JSON.parse(before.stdout).id]);
      expect(restored.status).toBe(1);
      expect(readFileSync(path.join(dir, ".env"), "utf8")).toBe("TOKEN=2\n");
    },
  );

  it("a .ghostignore that is a symlink to nothing (a disk not mounted, a broken dotfile link) stops snapshot and restore too", () => {
    const repo = sb.repo("dangling-ignore", { "a.txt": "a\n" });
    repo.write({ "b.secret": "KEY=1\n", ".ghostignore": "*.secret\n" });
    const before = repo.ok("snapshot");
    rmSync(path.join(repo.dir, ".ghostignore"));
    symlinkSync("/nonexistent/shared-ignore", path.join(repo.dir, ".ghostignore"));
    repo.write({ "b.secret": "KEY=2\n" });
    for (const args of [["snapshot"], ["restore", before.id]]) {
      const run = repo.cli([...args, "--json"]);
      expect([args[0], run.status, run.json.error.code]).toEqual([args[0], 1, "io"]);
      expect(run.json.error.message).toContain(
        `cannot read ${path.join(repo.dir, ".ghostignore")}: it is a symlink to /nonexistent/shared-ignore, which is not there (ENOENT)`,
      );
    }
    expect(repo.ok("list")).toHaveLength(1);
    expect(repo.read("b.secret")).toBe("KEY=2\n");
  });

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "a tracked file that is unreadable or a FIFO now is not claimed as committed: restore and diff report it",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("tracked", { "secret.txt": "one\n", pipe: "was a file\n", "ok.txt": "fine\n" });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = (args: string[]) => {
        const result = spawnSync(process.execPath, [cli, ...args], {
          cwd: repo.dir,
          env: sb.env,
          uid: 65534,
          gid: 65534,
          encoding: "utf8",
        });
        expect(result.status, result.stderr).toBe(0);
        return result.stdout;
      };
      const first = JSON.parse(run(["snapshot", "--json"])).id;
      // Its owner edits it, then takes away read permission; another program puts a FIFO in place.
      writeFileSync(repo.path("secret.txt"), "two\n");
      chmodSync(repo.path("secret.txt"), 0o000);
      rmSync(repo.path("pipe"));
      spawnSync("mkfifo", [repo.path("pipe")], { uid: 65534, gid: 65534 });
      const later = JSON.parse(run(["snapshot", "--json"]));
      expect(later.excluded).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ path: "pipe", reason: "unreadable" }),
          expect.objectContaining({ path: "secret.txt", reason: "unreadable" }),
        ]),
      );
      // Neither is claimed to be as committed: the snapshot does not hold them.
      expect(JSON.parse(run(["show", later.id, "--json"])).files).toEqual(["ok.txt"]);
      expect(run(["diff", first]).split("\n").filter(Boolean).sort()).toEqual(["D\tpipe", "D\tsecret.txt"]);
      const restored = JSON.parse(run(["restore", first, "--json"]));
      expect(restored.skipped).toEqual([
        { path: "pipe", reason: "excluded", detail: "unreadable" },
        { path: "secret.txt", reason: "excluded", detail: "unreadable" },
      ]);
      expect(lstatSync(repo.path("pipe")).isFIFO()).toBe(true);
      chmodSync(repo.path("secret.txt"), 0o644);
      expect(readFileSync(repo.path("secret.txt"), "utf8")).toBe("two\n");
      // Restoring the later snapshot once the file is readable again leaves its edit too.
      JSON.parse(run(["restore", later.id, "--json"]));
      expect(readFileSync(repo.path("secret.txt"), "utf8")).toBe("two\n");
    },
  );

  // Needs root to switch to another user (uid 65534).
  it.skipIf(process.getuid?.() !== 0)(
    "a push to a remote this user cannot write to says why in git's words, and changes nothing there",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("pusher", { "a.txt": "one\n" });
      appendFileSync(sb.env.GIT_CONFIG_GLOBAL!, "[safe]\n\tdirectory = *\n"); // the remote is root's
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const remote = path.join(sb.home, "read-only.git");
      sb.git(sb.home, "init", "-q", "--bare", remote); // root's: that user may read, not write
      const run = asNobody(cli, repo.dir, []);
      for (const step of [
        ["turn", "begin", "--session", "s", "--turn", "1"],
        ["turn", "end", "--session", "s", "--turn", "1"],
      ]) {
        expect(run(step).status).toBe(0);
      }
      const push = run(["push", remote]);
      expect(push.status).toBe(1);
      expect(push.stderr).toMatch(
        /^ghostcommit: cannot push to \S+: remote unpack failed: unable to create temporary object directory/,
      );
      expect(sb.git(remote, "for-each-ref")).toBe("");
    },
  );

  it.skipIf(process.getuid?.() !== 0)(
    "run as root in another user's work tree, a restore leaves the files that user's, as it found them",
    () => {
      const repo = sb.repo("theirs", { "a.txt": "one\n", "src/b.txt": "b\n" });
      const snap = repo.ok("snapshot").id;
      repo.write({ "a.txt": "two\n", "src/b.txt": "b2\n" });
      repo.remove("src/b.txt");
      repo.write({ "src/c.txt": "c\n" });
      spawnSync("chown", ["-R", "65534:65534", repo.dir]);
      // A root shell (sudo) in that user's repository; git trusts it for root only by config.
      appendFileSync(sb.env.GIT_CONFIG_GLOBAL!, `[safe]\n\tdirectory = ${repo.dir}\n`);
      const restored = repo.cli(["restore", snap, "--json"]);
      expect(restored.status, restored.stderr).toBe(0);
      expect(restored.json.written.sort()).toEqual(["a.txt", "src/b.txt"]);
      // src/ was emptied (src/c.txt deleted) and made again for src/b.txt.
      for (const rel of ["a.txt", "src", "src/b.txt"]) {
        const stat = lstatSync(repo.path(rel));
        expect([rel, stat.uid, stat.gid]).toEqual([rel, 65534, 65534]);
      }
      expect(repo.read("a.txt")).toBe("one\n");
    },
  );

  // Needs root to switch to another user (uid 65534), for whom a mode-000 file is unreadable.
  it.skipIf(process.getuid?.() !== 0)(
    "a file a turn made unreadable, named in a rewind, is reported left as it is (as the whole rewind reports it), not as unchanged",
    (ctx) => {
      const cli = cliForOtherUser(ctx);
      const repo = sb.repo("unreadable-turn", {
        "scripts/run.sh": "#!/bin/sh\n",
        "src/main.c": "int main;\n",
      });
      spawnSync("chown", ["-R", "65534:65534", sb.home]);
      const run = asNobody(cli, repo.dir);
      expect(run(["turn", "begin", "--session", "n1", "--turn", "1"]).status).toBe(0);
      chmodSync(repo.path("scripts/run.sh"), 0o000);
      writeFileSync(repo.path("src/main.c"), "int main(void);\n");
      expect(run(["turn", "end", "--session", "n1"]).status).toBe(0);
      const left = { path: "scripts/run.sh", reason: "excluded" };
      const whole = run(["rewind", "--session", "n1", "--to", "1", "--dry-run"]);
      expect([whole.status, JSON.parse(whole.stdout).skipped]).toEqual([0, [left]]);
      const named = asNobody(
        cli,
        repo.dir,
        [],
      )(["rewind", "--session", "n1", "--to", "1", "--dry-run", "--json", "--", "scripts/run.sh"]);
      expect([named.status, named.stderr]).toEqual([0, ""]);
      expect(JSON.parse(named.stdout)).toMatchObject({ written: [], deleted: [], skipped: [left] });
    },
  );
});
