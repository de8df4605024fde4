import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { excludedAt, fileSandbox, filesOf, gitDirDigest } from "../helpers/support.js";
import { listIn, doctorIn } from "../helpers/in-process.js";

const { sandbox, repo: makeRepo } = fileSandbox();
const watchmanInstalled = spawnSync("watchman", ["--version"]).status === 0;
const watched: string[] = [];

/** Turns Watchman on or off in the sandbox's ghostcommit config. */
function useWatchman(on: boolean): void {
  const config = path.join(sandbox.env.XDG_CONFIG_HOME!, "ghostcommit", "config.json");
  writeFileSync(config, JSON.stringify({ watchman: on }));
}

afterAll(() => {
  for (const root of watched) spawnSync("watchman", ["--no-spawn", "watch-del", root]);
});

// Status runs against a private index carrying git's untracked cache, which serves the files of
// unchanged directories without reading them. Each step below changes the tree under a directory
// the cache already holds.
// The same steps with Watchman answering git's fsmonitor queries, where it is installed.
describe.each([
  { watchman: false, label: "" },
  { watchman: true, label: ", Watchman answering status" },
])("untracked directories between snapshots (untracked cache$label)", ({ watchman }) => {
  const it = watchman && !watchmanInstalled ? test.skip : test; // skipped: Watchman is not installed
  beforeAll(() => useWatchman(watchman));
  const repo = (files: Record<string, string>) => {
    const r = makeRepo(files);
    if (watchman) watched.push(r.dir);
    return r;
  };

  it("sees files and directories appearing inside cached ones, and kinds changing", async () => {
    const r = repo({ "src/main.ts": "main\n" });
    r.write({ "new/a.txt": "a\n", "thing/inside.txt": "i\n", flat: "f\n", "src/extra.ts": "e\n" });
    const gitBefore = gitDirDigest(r);
    const first = r.ok("snapshot");
    expect(await filesOf(r, first.id)).toEqual(
      ["flat", "new/a.txt", "src/extra.ts", "src/main.ts", "thing/inside.txt"].sort(),
    );

    r.write({ "new/sub/b.txt": "b\n", "new/sub/deep/c.txt": "c\n", "src/later/d.ts": "d\n" });
    r.remove("thing");
    r.write({ thing: "now a file\n" }); // a directory turned into a file
    r.remove("flat");
    r.write({ "flat/x.txt": "now a dir\n" }); // a file turned into a directory
    const second = r.ok("snapshot");
    expect(await filesOf(r, second.id)).toEqual(
      [
        "flat/x.txt",
        "new/a.txt",
        "new/sub/b.txt",
        "new/sub/deep/c.txt",
        "src/extra.ts",
        "src/later/d.ts",
        "src/main.ts",
        "thing",
      ].sort(),
    );

    r.remove("new/sub/deep");
    r.write({ ".gitignore": "*.log\n", "new/sub/skip.log": "ignored\n" });
    const third = r.ok("snapshot");
    expect(await filesOf(r, third.id)).not.toContain("new/sub/deep/c.txt");
    expect(await filesOf(r, third.id)).not.toContain("new/sub/skip.log");
    expect(await filesOf(r, third.id)).toContain("new/sub/b.txt");

    r.ok("restore", first.id);
    expect(r.read("flat")).toBe("f\n");
    expect(r.read("thing/inside.txt")).toBe("i\n");
    expect(r.exists("new/sub/b.txt")).toBe(false);
    expect(gitDirDigest(r)).toEqual(gitBefore); // the user's index is never written
  });

  it("applies ignore rules, dependency dirs, nested repositories and large dirs inside a new directory", async () => {
    const r = repo({ "README.md": "r\n" });
    const files: Record<string, string> = {
      ".gitignore": "*.tmp\n",
      "tool/keep.js": "k\n",
      "tool/cache.tmp": "ignored\n",
      "tool/node_modules/dep/index.js": "d\n",
      "tool/node_modules/dep/lib.js": "l\n",
      "tool/nested/inner.txt": "n\n",
    };
    for (let i = 0; i < 201; i++) files[`gen/out/f${i}.txt`] = "g\n";
    r.write(files);
    execFileSync("git", ["init", "-q", r.path("tool/nested")], { env: r.sandbox.env });
    r.ok("snapshot");
    r.write({ "tool/more.js": "m\n" });
    const snap = r.ok("snapshot");
    expect(await filesOf(r, snap.id)).toEqual([".gitignore", "README.md", "tool/keep.js", "tool/more.js"]);
    expect(excludedAt(snap, "tool/node_modules")).toMatchObject({ reason: "dependency-dir", files: 2 });
    expect(excludedAt(snap, "tool/nested")).toMatchObject({ reason: "nested-repo" });
    expect(excludedAt(snap, "gen")).toMatchObject({ reason: "large-dir", files: 201 });
  });

  it("a later status reads only the directories that changed (git's own counters)", async () => {
    const r = repo({ "README.md": "r\n" });
    const files: Record<string, string> = {};
    for (let d = 0; d < 40; d++) for (let f = 0; f < 5; f++) files[`src/d${d}/f${f}.ts`] = "x\n";
    r.write(files);
    r.git("add", "-A");
    r.git("commit", "-q", "-m", "tree");
    for (let d = 0; d < 40; d++) r.write({ [`src/d${d}/new.txt`]: "untracked\n" });
    // Git re-reads a directory changed in the same second as its index ("racily clean"); a real
    // tree's directories are older than that.
    const past = new Date(Date.now() - 60_000);
    for (const dir of [".", "src", ...Array.from({ length: 40 }, (_, d) => `src/d${d}`)])
      utimesSync(r.path(dir), past, past);
    // Directories opened by a snapshot's git status, from git's trace2 (GIT_TRACE2_PERF): git
    // reports "opendir" only when its untracked cache is in use.
    const openedByStatus = (): number => {
      const log = path.join(r.sandbox.home, "trace2.txt");
      rmSync(log, { force: true });
      r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GIT_TRACE2_PERF: log });
      const lines = readFileSync(log, "utf8").split("\n");
      const statusPids = new Set(
        lines.filter((l) => / cmd_name .*\bstatus\b/.test(l)).map((l) => l.split("|")[1]),
      );
      const counts = lines
        .filter((l) => statusPids.has(l.split("|")[1]))
        .flatMap((l) => /opendir:(\d+)/.exec(l)?.[1] ?? []);
      return counts.length === 0 ? Number.NaN : counts.reduce((sum, n) => sum + Number(n), 0);
    };
    expect(openedByStatus()).toBeGreaterThan(40); // the first status fills the cache
    r.write({ "src/d7/another.txt": "new\n" });
    // Only src/d7 changed: the cache serves the other 40 directories without reading them.
    expect(openedByStatus()).toBeLessThanOrEqual(2);
    expect(await filesOf(r, (await listIn(r))[0].id)).toContain("src/d7/another.txt");
  });

  it("a directory that becomes a repository, and a repository that becomes a plain directory", async () => {
    const r = repo({ "README.md": "r\n" });
    r.write({ "vendor/lib/a.txt": "a\n", "old/b.txt": "b\n" });
    execFileSync("git", ["init", "-q", r.path("old")], { env: r.sandbox.env });
    // Directories older than the index, as in a real tree: git then trusts its cached listings.
    const past = new Date(Date.now() - 60_000);
    for (const dir of [".", "vendor", "vendor/lib", "old"]) utimesSync(r.path(dir), past, past);
    const first = r.ok("snapshot");
    expect(await filesOf(r, first.id)).toEqual(["README.md", "vendor/lib/a.txt"]);
    expect(excludedAt(first, "old")).toMatchObject({ reason: "nested-repo" });

    execFileSync("git", ["init", "-q", r.path("vendor/lib")], { env: r.sandbox.env });
    rmSync(r.path("old/.git"), { recursive: true });
    const second = r.ok("snapshot");
    expect(await filesOf(r, second.id)).toEqual(["README.md", "old/b.txt"]);
    expect(excludedAt(second, "vendor/lib")).toMatchObject({ reason: "nested-repo" });
  });

  it("a damaged private index is dropped and made again; the snapshot is still right", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "new/b.txt": "b\n" });
    r.ok("snapshot");
    const workspaces = path.join(r.sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
    const copies = readdirSync(workspaces)
      .map((key) => path.join(workspaces, key, "status-index"))
      .filter((file) => {
        try {
          return readdirSync(path.dirname(file)).includes("status-index");
        } catch {
          return false;
        }
      });
    expect(copies.length).toBeGreaterThan(0);
    for (const file of copies) writeFileSync(file, "DIRC damaged");
    r.write({ "new/c.txt": "c\n", "a.txt": "edited\n" });
    const snap = r.ok("snapshot");
    expect(await filesOf(r, snap.id)).toEqual(["a.txt", "new/b.txt", "new/c.txt"]);
    r.write({ "new/d.txt": "d\n" });
    expect(await filesOf(r, r.ok("snapshot").id)).toContain("new/d.txt");
  });
});

describe("the private index is written now and then, not by every status", () => {
  beforeAll(() => useWatchman(false));

  test("a changed directory (new files, a restore's renames) does not rewrite it each time, and nothing is missed", async () => {
    const r = makeRepo({ "src/a.ts": "a\n" });
    const first = r.ok("snapshot"); // makes the copy and fills its untracked cache
    const store = (await doctorIn(r)).store as string;
    const indexFile = path.join(store, "status-index");
    const written = readFileSync(indexFile);
    r.write({ "src/new/b.ts": "b\n", "src/c.ts": "c\n" });
    const second = r.ok("snapshot");
    r.write({ "src/a.ts": "edited\n" });
    r.ok("restore", first.id); // renames a.ts back and deletes the new files
    const third = r.ok("snapshot");
    expect(readFileSync(indexFile).equals(written)).toBe(true);
    expect(await filesOf(r, second.id)).toEqual(["src/a.ts", "src/c.ts", "src/new/b.ts"]);
    expect(await filesOf(r, third.id)).toEqual(["src/a.ts"]);
    expect(r.read("src/a.ts")).toBe("a\n");

    // Once the last write is a minute old, the next status writes what it learnt.
    const stampFile = path.join(store, "status-index.json");
    const stamp = JSON.parse(readFileSync(stampFile, "utf8"));
    writeFileSync(stampFile, JSON.stringify({ ...stamp, writtenAt: stamp.writtenAt - 61_000 }));
    r.write({ "src/later/d.ts": "d\n" });
    const fourth = r.ok("snapshot");
    expect(readFileSync(indexFile).equals(written)).toBe(false);
    expect(await filesOf(r, fourth.id)).toEqual(["src/a.ts", "src/later/d.ts"]);
  });
});

describe("status on your own index (split index, or a large tree's first snapshot)", () => {
  beforeAll(() => useWatchman(false));

  test("uses the untracked cache your git keeps, and still sees every file added since", async () => {
    const r = makeRepo({ "src/a.ts": "a\n" });
    // A split index is never copied: status reads the user's index as it is, with the cache the
    // user's git built into it (for both untracked modes, as a user's statuses would).
    r.git("config", "core.untrackedCache", "true");
    r.git("config", "core.splitIndex", "true");
    r.write({ "cached/old.txt": "old\n", "cached/sub/old.txt": "old\n" });
    r.git("update-index", "--split-index");
    r.git("status", "--porcelain");
    r.git("-c", "status.showUntrackedFiles=all", "status", "--porcelain");
    expect(readFileSync(path.join(r.dir, ".git", "index")).includes("UNTR")).toBe(true);
    expect(readdirSync(path.join(r.dir, ".git")).some((n) => n.startsWith("sharedindex."))).toBe(true);
    r.write({ "cached/new.txt": "new\n", "cached/sub/deep/new.txt": "deep\n", "brandnew/x.txt": "x\n" });
    const gitBefore = gitDirDigest(r);
    const snap = r.ok("snapshot");
    expect(await filesOf(r, snap.id)).toEqual([
      "brandnew/x.txt",
      "cached/new.txt",
      "cached/old.txt",
      "cached/sub/deep/new.txt",
      "cached/sub/old.txt",
      "src/a.ts",
    ]);
    expect(gitDirDigest(r)).toEqual(gitBefore);
  });
});
