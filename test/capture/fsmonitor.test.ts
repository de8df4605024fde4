import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileSandbox, filesOf } from "../helpers/support.js";
import type { Repo } from "../helpers/repo.js";

// Where Watchman is installed, status asks it what changed through git's fsmonitor hook
// protocol (version 2). These tests check that it is really used, that it never changes what a
// snapshot holds, and that it is said and reported, never silent.
const installed = spawnSync("watchman", ["--version"]).status === 0;
const { sandbox, repo: makeRepo } = fileSandbox();
const watched: string[] = [];
const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // "café.txt" in latin1

const watchRoots = (): string[] =>
  JSON.parse(
    spawnSync("watchman", ["--no-pretty", "--no-spawn", "watch-list"], { encoding: "utf8" }).stdout || "{}",
  ).roots ?? [];

/**
 * A snapshot with git's trace2 on: the fsmonitor hook's outcomes in its status, and whether
 * ghostcommit asked Watchman itself, ahead of status (`ahead`), or left it to the hook script.
 */
function tracedSnapshot(r: Repo): { id: string; stderr: string; hook: string[]; ahead: boolean } {
  const log = path.join(sandbox.home, "trace2.txt");
  rmSync(log, { force: true });
  const result = sandbox.cli(r.dir, ["snapshot", "--json"], undefined, {
    GIT_TRACE2_PERF: log,
    GHOSTCOMMIT_TRACE: "1",
  });
  expect(result.status, result.stderr).toBe(0);
  const lines = readFileSync(log, "utf8").split("\n");
  const hook = lines
    .filter((line) => line.includes("| fsm_hook ") && /query\/(response-length|failed)/.test(line))
    .map((line) => /query\/(\S+)/.exec(line)![1]);
  const hookRuns = lines.filter((line) => line.includes("child_start") && line.includes("fsmonitor"));
  const ahead = result.stderr.includes("capture: Watchman asked ahead");
  // Asked ahead, git runs a one-line command instead of the Perl script, never both.
  if (hook.length > 0) expect(hookRuns.some((line) => line.includes("fsmonitor-hook.pl"))).toBe(!ahead);
  return { id: result.json.id, stderr: result.stderr, hook, ahead };
}

describe.skipIf(!installed)("Watchman through git's fsmonitor hook", () => {
  const config = () => path.join(sandbox.env.XDG_CONFIG_HOME!, "ghostcommit", "config.json");
  beforeAll(() => writeFileSync(config(), '{"watchman": true}\n'));
  afterAll(() => {
    for (const root of watched) spawnSync("watchman", ["--no-spawn", "watch-del", root]);
  });
  const repo = (files: Record<string, string>) => {
    const r = makeRepo(files);
    watched.push(r.dir);
    return r;
  };

  it("starts watching once, says so, answers status, and sees every change", async () => {
    const r = repo({ "src/a.ts": "one\n", "src/b.ts": "bee\n" });
    const first = tracedSnapshot(r);
    expect(first.stderr).toContain(`Watchman now watches ${r.dir}`);
    expect(first.stderr).toContain("watchman watch-del");
    expect(watchRoots()).toContain(r.dir);
    const doctor = r.ok("doctor");
    expect(doctor.watchman).toMatchObject({ inUse: true, startedWatch: r.dir });

    tracedSnapshot(r); // git's first token is not Watchman's: this query answers "everything"
    r.write({ "src/a.ts": "two\n", "src/new/c.ts": "sea\n" }); // same size as before
    r.remove("src/b.ts");
    const later = tracedSnapshot(r);
    expect(later.ahead).toBe(true);
    expect(later.stderr).not.toContain("Watchman now watches");
    expect(later.hook.length).toBeGreaterThan(0);
    expect(later.hook.every((outcome) => outcome.startsWith("response-length"))).toBe(true);
    expect(await filesOf(r, later.id)).toEqual(["src/a.ts", "src/new/c.ts"]);
    r.ok("restore", first.id);
    expect(r.read("src/a.ts")).toBe("one\n");
    expect(r.read("src/b.ts")).toBe("bee\n");
    expect(r.exists("src/new/c.ts")).toBe(false);

    // Changed right after a snapshot, within the same second, and with the same size.
    for (const text of ["3rd\n", "4th\n"]) {
      r.write({ "src/a.ts": text });
      const snap = tracedSnapshot(r);
      expect(snap.hook.every((outcome) => outcome.startsWith("response-length"))).toBe(true);
      r.write({ "src/a.ts": "xxx\n" });
      r.ok("restore", snap.id);
      expect(r.read("src/a.ts")).toBe(text);
    }
  });

  it("writes its private index only now and then (Watchman answers from an older token), and misses nothing between", async () => {
    const r = repo({ "a.txt": "a\n" });
    tracedSnapshot(r);
    tracedSnapshot(r); // git's own token, then Watchman's: both are written
    const indexFile = path.join(r.ok("doctor").store, "status-index");
    const written = readFileSync(indexFile);
    const snaps: string[] = [];
    const edits: Record<string, string>[] = [
      { "a.txt": "b\n" },
      { "new/dir/c.txt": "c\n" },
      { "a.txt": "d\n", "new/e.txt": "e\n" },
    ];
    for (const files of edits) {
      r.write(files);
      const snap = tracedSnapshot(r);
      expect(snap.hook).toEqual([expect.stringMatching(/^response-length/)]);
      snaps.push(snap.id);
    }
    expect(readFileSync(indexFile).equals(written)).toBe(true);
    expect(await filesOf(r, snaps[1])).toEqual(["a.txt", "new/dir/c.txt"]);
    expect(await filesOf(r, snaps[2])).toEqual(["a.txt", "new/dir/c.txt", "new/e.txt"]);
    r.ok("restore", snaps[0]);
    expect(r.read("a.txt")).toBe("b\n");
    expect(r.exists("new")).toBe(false);
    r.ok("restore", snaps[2]);
    expect(r.read("a.txt")).toBe("d\n");
    expect(r.read("new/dir/c.txt")).toBe("c\n");
  });

  it("a tracked file whose name is not UTF-8, edited with its size kept, is captured (Watchman's answer names it byte for byte)", () => {
    const r = repo({ "a.txt": "a\n" });
    const name = Buffer.concat([Buffer.from(`${r.dir}/t/`), LATIN1]);
    mkdirSync(path.join(r.dir, "t"));
    writeFileSync(name, "one\n");
    r.git("add", "-A");
    r.git("commit", "-qm", "latin1 name");
    tracedSnapshot(r);
    const before = tracedSnapshot(r); // Watchman's token from here on
    writeFileSync(name, "two\n");
    const after = tracedSnapshot(r);
    expect(after.ahead).toBe(true);
    writeFileSync(name, "xxx\n");
    r.ok("restore", after.id);
    expect(readFileSync(name, "utf8")).toBe("two\n");
    r.ok("restore", before.id);
    expect(readFileSync(name, "utf8")).toBe("one\n");
  });

  it("works for a work tree whose path holds a space and a quote (the hook runs through the shell)", async () => {
    const r = sandbox.repo("it's a repo", { "a.txt": "a\n" });
    watched.push(r.dir);
    tracedSnapshot(r);
    tracedSnapshot(r);
    r.write({ "a.txt": "b\n", "new dir/c.txt": "c\n" });
    const snap = tracedSnapshot(r);
    expect(snap.hook).toEqual([expect.stringMatching(/^response-length/)]);
    expect(await filesOf(r, snap.id)).toEqual(["a.txt", "new dir/c.txt"]);
  });

  it("a watch removed behind its back (watch-del) is watched again by the next snapshot, which misses no edit and says so once", async () => {
    const r = repo({ "a.txt": "a\n" });
    tracedSnapshot(r);
    tracedSnapshot(r); // the private index now carries a clock of this watch
    spawnSync("watchman", ["watch-del", r.dir]);
    r.write({ "a.txt": "A\n", "b.txt": "new\n" }); // a.txt keeps its size
    const next = tracedSnapshot(r);
    expect(watchRoots()).toContain(r.dir);
    expect(await filesOf(r, next.id)).toEqual(["a.txt", "b.txt"]);
    expect(next.hook).toEqual([expect.stringMatching(/^response-length/)]); // "everything", from the new watch
    expect(next.stderr).toContain(`Watchman watches ${r.dir} again`);
    expect(next.stderr).toContain('"watchman": false');

    // From then on Watchman's own answers see every change, and nothing more is said.
    tracedSnapshot(r);
    r.write({ "a.txt": "B\n", "c.txt": "sea\n" });
    r.remove("b.txt");
    const later = tracedSnapshot(r);
    expect(later.ahead).toBe(true);
    expect(later.stderr).not.toMatch(/Watchman (now )?watches/);
    expect(await filesOf(r, later.id)).toEqual(["a.txt", "c.txt"]);
    expect(r.ok("doctor").watchman).toMatchObject({ inUse: true, startedWatch: r.dir });
  });

  it("is not used when turned off, when a .watchmanconfig hides directories, or where it is not installed", () => {
    const r = repo({ "a.txt": "a\n" });
    writeFileSync(path.join(r.dir, ".ghostcommit.json"), '{"watchman": false}\n');
    const off = tracedSnapshot(r);
    expect(off.hook).toEqual([]);
    expect(off.stderr).not.toContain("Watchman");
    expect(r.ok("doctor").watchman).toMatchObject({
      inUse: false,
      reason: expect.stringContaining("turned off"),
    });

    // The default, "auto": only repositories large enough for it to pay.
    writeFileSync(path.join(r.dir, ".ghostcommit.json"), '{"watchman": "auto"}\n');
    expect(tracedSnapshot(r).hook).toEqual([]);
    expect(r.ok("doctor").watchman.reason).toContain("fewer than 20,000 tracked files");
    writeFileSync(path.join(r.dir, ".ghostcommit.json"), '{"watchman": "yes"}\n');
    const bad = sandbox.cli(r.dir, ["snapshot"]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('"watchman" must be true, false or "auto"');

    rmSync(path.join(r.dir, ".ghostcommit.json"));
    writeFileSync(path.join(r.dir, ".watchmanconfig"), '{"ignore_dirs": ["build-out"]}\n');
    expect(tracedSnapshot(r).hook).toEqual([]);
    expect(r.ok("doctor").watchman.reason).toContain(".watchmanconfig");
    rmSync(path.join(r.dir, ".watchmanconfig"));

    // A PATH with git and perl but no watchman.
    const bin = path.join(sandbox.home, "bin-without-watchman");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["git", "perl"]) {
      const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      symlinkSync(found, path.join(bin, tool));
    }
    const doctor = sandbox.cli(r.dir, ["doctor", "--json"], undefined, { PATH: bin });
    expect(doctor.json.watchman).toMatchObject({ inUse: false, reason: "Watchman is not installed" });
    const snap = sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { PATH: bin });
    expect(snap.status, snap.stderr).toBe(0);
    expect(watchRoots()).not.toContain(r.dir);
  });
});
