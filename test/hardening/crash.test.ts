import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { CLI, Sandbox } from "../helpers/repo.js";
import { killedAtCall } from "../restore/strace.js";
import { snapshotIn } from "../session/support.js";
import { cliAsync, fingerprint, fsckStore, seeded, storeDir } from "./helpers.js";
import { listIn, doctorIn } from "../helpers/in-process.js";

function tempFiles(print: Map<string, string>): string[] {
  return [...print.keys()].filter((p) => /\.gc-[0-9a-f-]+~$/.test(p));
}

describe("kill -9 at random points", () => {
  const sb = new Sandbox();
  let dir = "";
  let target = "";
  let before = new Map<string, string>();
  const canary = path.join(sb.home, "canary.txt");

  beforeAll(() => {
    const repo = sb.repo("ws", {});
    dir = repo.dir;
    writeFileSync(canary, "outside\n");
    for (let d = 0; d < 10; d++) {
      mkdirSync(path.join(dir, `d${d}`));
      for (let f = 0; f < 60; f++) writeFileSync(path.join(dir, `d${d}`, `f${f}.txt`), `v1 ${d}/${f}\n`);
    }
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", "base");
    target = repo.ok("snapshot", "-m", "target").id;
    // The state a restore will be killed in: every file edited, as many new ones.
    for (let d = 0; d < 10; d++) {
      for (let f = 0; f < 60; f++) {
        writeFileSync(path.join(dir, `d${d}`, `f${f}.txt`), `v2 ${d}/${f}\n`);
        writeFileSync(path.join(dir, `d${d}`, `new${f}.txt`), `new ${d}/${f}\n`);
      }
    }
    before = fingerprint(dir);
  });
  afterAll(() => sb.cleanup());

  it("a killed restore leaves the workspace untouched or restorable exactly from its safety snapshot; the store stays usable", async () => {
    // How long an uninterrupted restore takes here, to spread the kills over all of it.
    const started = Date.now();
    const full = await cliAsync(sb, dir, ["restore", target, "--json"]);
    const duration = Math.max(300, Date.now() - started);
    expect(full.status, full.stderr).toBe(0);
    const undo = JSON.parse(full.stdout).safety;
    const restored = fingerprint(dir);
    const undone = await cliAsync(sb, dir, ["restore", undo]);
    expect(undone.status, undone.stderr).toBe(0);
    expect(fingerprint(dir)).toEqual(before);

    const random = seeded(42);
    let interrupted = 0;
    let partialByKill = 0;
    for (let round = 0; round < 14; round++) {
      const delay = Math.floor(random() * duration);
      const killed = await cliAsync(sb, dir, ["restore", target, "--json"], delay);
      expect(readFileSync(canary, "utf8")).toBe("outside\n");
      if (killed.signal !== "SIGKILL") {
        expect(killed.status, killed.stderr).toBe(0); // finished before the kill
      } else {
        interrupted++;
      }
      const now = fingerprint(dir);
      const untouched =
        tempFiles(now).length === 0 && JSON.stringify([...now]) === JSON.stringify([...before]);
      if (!untouched) {
        // A kill that landed after the restore had finished (its journal removed, the process
        // not yet exited) left the target's state: nothing interrupted for doctor to name.
        const finished =
          tempFiles(now).length === 0 && JSON.stringify([...now]) === JSON.stringify([...restored]);
        if (killed.signal === "SIGKILL" && !finished) partialByKill++;
        const doctorCodes = async () =>
          JSON.parse((await cliAsync(sb, dir, ["doctor", "--json"])).stdout).problems.map(
            (p: { code: string }) => p.code,
          );
        const firstChange = killed.signal === "SIGKILL" && !finished && partialByKill === 1;
        if (firstChange) expect(await doctorCodes()).toContain("interrupted-restore");
        // The way back: the newest safety snapshot restores the state before the restore exactly.
        const list = await listIn({ sandbox: sb, dir });
        const safety = list.find((s: { kind: string }) => s.kind === "safety");
        const back = await cliAsync(sb, dir, ["restore", safety.id, "--json"]);
        expect(back.status, back.stderr).toBe(0);
        // Done as doctor said: the interrupted restore is settled, no longer named.
        if (firstChange) expect(await doctorCodes()).not.toContain("interrupted-restore");
      }
      expect(fingerprint(dir)).toEqual(before);
    }
    expect(interrupted).toBeGreaterThan(0);

    // Kill snapshots and gc too: nothing they leave may break the store.
    for (let round = 0; round < 6; round++) {
      const args = round % 3 === 2 ? ["gc", "--keep", "50"] : ["snapshot"];
      await cliAsync(sb, dir, args, Math.floor(random() * 400));
    }
    const next = await cliAsync(sb, dir, ["snapshot", "--json"]);
    expect(next.status, next.stderr).toBe(0);
    const latest = await cliAsync(sb, dir, ["restore", JSON.parse(next.stdout).id]);
    expect(latest.status, latest.stderr).toBe(0);
    expect(fingerprint(dir)).toEqual(before);

    // A restore that ran to its end settled the interrupted ones: doctor no longer names them.
    const doctor = await cliAsync(sb, dir, ["doctor", "--json"]);
    const codes = JSON.parse(doctor.stdout).problems.map((p: { code: string }) => p.code);
    expect(codes).not.toContain("interrupted-restore");
    const repair = await cliAsync(sb, dir, ["doctor", "--repair", "--json"]);
    expect(JSON.parse(repair.stdout).ok, repair.stdout).toBe(true);
    expect(fsckStore(sb)).toEqual({ status: 0, problems: [] });
    expect(readdirSync(path.join(storeDir(sb), "tmp"))).toEqual([]);
  }, 120_000);

  it("the next run removes a dead restore's temp files before capturing, and doctor reports the interrupted restore", async () => {
    const store = storeDir(sb);
    const deadPid = 2 ** 22 + 12345; // above pid_max's default: never a live process
    writeFileSync(path.join(dir, "d0", ".f1.txt.gc-abcdef0123-0~"), "half-written");
    writeFileSync(path.join(dir, ".top.gc-abcdef0123-7~"), "half-written");
    writeFileSync(path.join(dir, "d1", ".keep.gc-ffffffffff-0~"), "another run's name: not ours to remove");
    mkdirSync(path.join(store, "tmp", `gitdir-${deadPid}-0a0b0c0d`), { recursive: true });
    writeFileSync(
      path.join(store, "tmp", `restore-${deadPid}.json`),
      JSON.stringify({
        pid: deadPid,
        safety: "1".repeat(40),
        startedAt: "x",
        token: "abcdef0123",
        dirs: ["", "d0"],
      }),
    );
    // A go-ahead no waiting shell took (its shell was killed): gone once a minute old.
    const staleGo = path.join(store, "push-go-00112233aabbccdd");
    const freshGo = path.join(store, "gc-go-44556677eeff0011");
    writeFileSync(staleGo, "00112233aabbccdd\n");
    writeFileSync(freshGo, "44556677eeff0011\n");
    utimesSync(staleGo, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    // Before a capture removes them, doctor says what the files git shows as untracked are.
    expect(sb.cli(dir, ["doctor", "--json"]).json.problems).toContainEqual(
      expect.objectContaining({
        code: "interrupted-restore",
        message: expect.stringContaining(
          "; the temp files it was writing, named `.<name>.gc-abcdef0123-<n>~`, go at the next snapshot or restore, or with `doctor --repair`",
        ),
      }),
    );
    const snap = sb.ok(dir, "snapshot");
    expect([existsSync(staleGo), existsSync(freshGo)]).toEqual([false, true]);
    const files: string[] = sb.ok(dir, "show", snap.id).files;
    expect(files.filter((f) => f.includes(".gc-abcdef0123-"))).toEqual([]);
    expect(existsSync(path.join(dir, "d0", ".f1.txt.gc-abcdef0123-0~"))).toBe(false);
    expect(existsSync(path.join(dir, ".top.gc-abcdef0123-7~"))).toBe(false);
    expect(existsSync(path.join(dir, "d1", ".keep.gc-ffffffffff-0~"))).toBe(true);
    expect(existsSync(path.join(store, "tmp", `gitdir-${deadPid}-0a0b0c0d`))).toBe(false);
    const doctor = sb.cli(dir, ["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toContainEqual(
      expect.objectContaining({
        code: "interrupted-restore",
        message: expect.stringContaining("1".repeat(40)),
      }),
    );
    // Doing what it says (or any restore that then runs to its end) settles it.
    sb.ok(dir, "restore", snap.id);
    expect((await doctorIn({ sandbox: sb, dir })).ok).toBe(true);
  });
});

describe("a restore killed before it filled the directories it made", () => {
  const sb = new Sandbox();
  afterAll(() => sb.cleanup());

  it("the next run removes its temp files and those directories left empty, and nothing else", () => {
    const repo = sb.repo("made", { "a.txt": "one\n" });
    const safety = repo.ok("snapshot").id;
    const store = storeDir(sb, repo.dir);
    const deadPid = 2 ** 22 + 4321; // above pid_max's default: never a live process
    // As the journal lists them: directories that were not there when it began.
    mkdirSync(repo.path("new/x/y"), { recursive: true });
    writeFileSync(repo.path("new/x/.f.txt.gc-abcdef0123-0~"), "half-written");
    mkdirSync(repo.path("filled"));
    writeFileSync(repo.path("filled/mine.txt"), "put there since\n");
    mkdirSync(repo.path("empty-before")); // the user's own, not listed: stays
    mkdirSync(path.join(sb.home, "outside"));
    symlinkSync(path.join(sb.home, "outside"), repo.path("link"));
    writeFileSync(
      path.join(store, "tmp", `restore-${deadPid}.json`),
      JSON.stringify({
        pid: deadPid,
        safety,
        startedAt: "x",
        token: "abcdef0123",
        dirs: ["new/x"],
        made: ["filled", "link", "link/sub", "new", "new/x", "new/x/y", "../outside"],
      }),
    );
    repo.ok("snapshot");
    expect(existsSync(repo.path("new"))).toBe(false);
    expect(readFileSync(repo.path("filled/mine.txt"), "utf8")).toBe("put there since\n");
    expect(lstatSync(repo.path("empty-before")).isDirectory()).toBe(true);
    expect(lstatSync(repo.path("link")).isSymbolicLink()).toBe(true);
    expect(existsSync(path.join(sb.home, "outside"))).toBe(true);
    const doctor = repo.cli(["doctor", "--json"]);
    expect(doctor.json.problems.map((p: { code: string }) => p.code)).toContain("interrupted-restore");
  });
});

describe("a gc cut off mid-repack (the machine lost power while it ran)", () => {
  const sb = new Sandbox();
  afterAll(() => sb.cleanup());

  it("leaves a pack as large as the store under a temp name: doctor names it, the next gc removes it", async () => {
    const repo = sb.repo("gc-cut", { "a.txt": "one\n" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      repo.write({ [`big${i}.bin`]: randomBytes(1 << 20).toString("base64") });
      ids.push((await snapshotIn(repo)).id); // the store's content, taken in-process
    }
    const gitDir = path.join(storeDir(sb, repo.dir), "git");
    const pack = path.join(gitDir, "objects", "pack");
    // gc's repack as gc runs it, its pack-objects killed at its second rename: the pack has
    // its temp name `.tmp-<repack's pid>-pack-<id>.pack` and the index is still mkstemp's.
    const killed = killedAtCall(
      ["git", "repack", "-a", "-d", "-l", "-q", "--no-write-bitmap-index"],
      "rename",
      2,
      {
        env: { ...sb.env, GIT_DIR: gitDir },
      },
    );
    expect(killed.stderr).toMatch(/pack-objects died of signal 9/);
    const temps = () => readdirSync(pack).filter((name) => /^(\.tmp-|tmp_)/.test(name));
    const left = temps().sort();
    expect(left).toEqual([
      expect.stringMatching(/^\.tmp-\d+-pack-[0-9a-f]{40}\.pack$/),
      expect.stringMatching(/^tmp_idx_[A-Za-z0-9]{6}$/),
    ]);
    expect(lstatSync(path.join(pack, left[0])).size).toBeGreaterThan(3_000_000);

    const named = repo
      .cli(["doctor", "--json"])
      .json.problems.filter((p: { code: string }) => p.code === "leftover-temp-pack")
      .map((p: { path: string }) => path.basename(p.path))
      .sort();
    expect(named).toEqual(left);
    repo.ok("gc");
    expect(temps()).toEqual([]);
    expect((await doctorIn(repo)).ok).toBe(true);
    expect(fsckStore(sb)).toEqual({ status: 0, problems: [] });
    repo.ok("restore", ids[0]);
    expect(existsSync(repo.path("big1.bin"))).toBe(false);
    repo.ok("restore", ids[2]);
    expect(readFileSync(repo.path("big2.bin"), "utf8").length).toBeGreaterThan(1_000_000);
  });
});

describe("a gc killed while its git writes refs", () => {
  const sb = new Sandbox();
  afterAll(() => sb.cleanup());

  it("leaves no ref lock past the next gc; doctor names one at once", async () => {
    const repo = sb.repo("gc-locks", { "a.txt": "one\n" });
    await snapshotIn(repo);
    const gitDir = path.join(storeDir(sb, repo.dir), "git");
    const locks = () =>
      (readdirSync(gitDir, { recursive: true }) as string[]).filter(
        (name) => name.endsWith(".lock") || name === "packed-refs.new",
      );
    // Killed at each rename in turn (node's and its git's: pack-refs, update-ref) until one runs
    // through; after each, the next command that updates refs works.
    let status: number | null = null;
    let killed = 0;
    for (let n = 1; status !== 0; n++) {
      expect(n).toBeLessThan(60);
      // Snapshots for the gc to drop, taken in-process: the commands after the kill, on the
      // command line, are what must work.
      for (let i = 0; i < 3; i++) {
        repo.write({ "a.txt": `${n}.${i}\n` });
        await snapshotIn(repo);
      }
      status = killedAtCall([process.execPath, CLI, "gc", "--keep", "1"], "rename", n, {
        cwd: repo.dir,
        env: sb.env,
      }).status;
      if (status !== 0) killed++;
      if (locks().length > 0) {
        // What a killed git left is a problem doctor names, with no wait for it to age.
        const problems = (await doctorIn(repo)).problems;
        const named = problems.filter((p: { code: string }) => p.code === "stale-lock");
        expect(named.length, `killed at rename ${n}`).toBeGreaterThan(0);
      }
      // The next gc (the daily one, or by hand) clears the way, and refs can be updated again.
      const gc = repo.cli(["gc"]);
      expect(gc.status, `gc after a kill at rename ${n}: ${gc.stderr}`).toBe(0);
      expect(locks(), `killed at rename ${n}`).toEqual([]);
      const [oldest] = (await listIn(repo)).slice(-1);
      expect(repo.cli(["drop", oldest.id]).status, `drop after a kill at rename ${n}`).toBe(0);
    }
    // A loop whose kills never landed would prove nothing.
    expect(killed).toBeGreaterThan(1);
    repo.ok("snapshot");
    expect(fsckStore(sb)).toEqual({ status: 0, problems: [] });
  });
});

describe("a snapshot killed while it writes its pack", () => {
  const sb = new Sandbox();
  afterAll(() => sb.cleanup());

  it("leaves a temp pack that doctor names and the next snapshot, or doctor --repair, removes", async () => {
    const repo = sb.repo("snap-cut", { "a.txt": "one\n" });
    repo.ok("snapshot");
    const pack = path.join(storeDir(sb, repo.dir), "git", "objects", "pack");
    const temps = () => readdirSync(pack).filter((name) => name.startsWith("tmp_pack_gc_"));
    const killedWritingPack = (round: number) => {
      repo.write(
        Object.fromEntries(
          Array.from({ length: 40 }, (_, i) => [`big${round}/b${i}.bin`, randomBytes(100_000)]),
        ),
      );
      // Its main thread's renames: borrowed.json's (when it changed), the pack's into place, then
      // the index's through the same temp name. Killed at the second, one of the two is left there.
      killedAtCall([process.execPath, CLI, "snapshot"], "rename", 2, { cwd: repo.dir, env: sb.env });
      expect(temps()).toHaveLength(1);
    };
    killedWritingPack(0);
    const named = repo
      .cli(["doctor", "--json"])
      .json.problems.filter((p: { code: string }) => p.code === "leftover-temp-pack")
      .map((p: { path: string }) => path.basename(p.path));
    expect(named).toEqual(temps());
    repo.ok("snapshot");
    expect(temps()).toEqual([]);
    killedWritingPack(1);
    expect(repo.ok("doctor", "--repair").repaired).toContainEqual(
      expect.objectContaining({ code: "removed-leftover", path: expect.stringContaining("tmp_pack_gc_") }),
    );
    expect(temps()).toEqual([]);
    expect((await doctorIn(repo)).ok).toBe(true);
  });
});

describe("a turn's end killed while it holds its session's journal lock", () => {
  it("leaves a lock doctor names and --repair removes; the next command takes it over anyway", () => {
    const sb = new Sandbox();
    onTestFinished(() => sb.cleanup());
    const repo = sb.repo("repo", { "a.txt": "a\n" });
    repo.ok("turn", "begin", "--session", "s", "--turn", "1");
    repo.write({ "b.txt": "b\n" });
    const sessions = path.join(storeDir(sb, repo.dir), "sessions");
    const locks = () => readdirSync(sessions).filter((name) => name.endsWith(".ghostlock"));
    // Killed at each flush in turn (the snapshot's first, then the journal's, under its lock), as
    // a hook killed by its agent's timeout, until one leaves the journal's lock.
    for (let n = 1; locks().length === 0; n++) {
      expect(n, "no kill left the session's lock").toBeLessThan(20);
      const killed = killedAtCall([process.execPath, CLI, "turn", "end", "--session", "s"], "fsync", n, {
        cwd: repo.dir,
        env: sb.env,
      });
      expect(killed.status, `killed at fsync ${n}`).not.toBe(0);
    }
    const named = repo
      .cli(["doctor", "--json"])
      .json.problems.filter((p: { path?: string }) => p.path?.startsWith(sessions));
    expect(named).toEqual([
      {
        code: "stale-lock",
        message: `sessions/${locks()[0]} was left by a process that died; \`doctor --repair\` removes it`,
        path: path.join(sessions, locks()[0]),
      },
    ]);
    const repaired = repo.cli(["doctor", "--repair", "--json"]).json;
    expect(repaired.ok).toBe(true);
    expect(repaired.repaired).toContainEqual(
      expect.objectContaining({
        code: "removed-stale-lock",
        path: named[0].path,
      }),
    );
    expect(locks()).toEqual([]);
    expect(repo.ok("turn", "end", "--session", "s").changed).toEqual(["b.txt"]);
  });
});
