import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Repo } from "../helpers/repo.js";
import { excludedAt, fileSandbox, filesOf } from "../helpers/support.js";
import { listIn } from "../helpers/in-process.js";

const { sandbox, repo } = fileSandbox();

describe("capture in a git repository", () => {
  it("captures untracked files, and a restore removes ones created after the snapshot", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "new/untracked.txt": "u\n" });
    const snap = r.ok("snapshot");
    expect((await filesOf(r, snap.id)).sort()).toEqual(["a.txt", "new/untracked.txt"]);
    expect(snap.fileCount).toBe(2);
    r.write({ "later/file.txt": "later\n", "new/untracked.txt": "changed\n" });
    const report = r.ok("restore", snap.id);
    expect(report.deleted).toEqual(["later/file.txt"]);
    expect(report.written).toEqual(["new/untracked.txt"]);
    expect(r.read("new/untracked.txt")).toBe("u\n");
    expect(r.exists("later")).toBe(false); // the emptied directory went too
  });

  it("ignores what the user's git ignores where core.ignoreCase is set (as git init sets it on macOS)", () => {
    const r = repo({ ".gitignore": "*.log\n!Important.log\nSECRETS.TXT\n", "t.txt": "t\n" });
    r.git("config", "core.ignoreCase", "true");
    r.write({ "important.log": "precious\n", "secrets.txt": "KEY=1\n" });
    // git: `?? important.log` (the negation matches it), `!! secrets.txt`.
    expect(r.git("status", "--porcelain", "--ignored")).toBe("?? important.log\n!! secrets.txt\n");
    const first = r.ok("snapshot");
    const later = r.ok("snapshot");
    for (const snap of [first, later]) {
      expect(r.ok("show", snap.id).files).toEqual([".gitignore", "important.log", "t.txt"]);
    }
    // And with it unset again, git's default: case matters (the untracked cache the private index
    // copy kept under the other setting does not answer for this one).
    r.git("config", "--unset", "core.ignoreCase");
    expect(r.ok("show", r.ok("snapshot").id).files).toEqual([".gitignore", "secrets.txt", "t.txt"]);
  });

  it("keeps untracked files that existed before the snapshot through a restore", () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "notes.txt": "mine\n" });
    const snap = r.ok("snapshot");
    r.write({ "a.txt": "agent\n" });
    r.ok("restore", snap.id);
    expect(r.read("notes.txt")).toBe("mine\n");
    expect(r.read("a.txt")).toBe("a\n");
  });

  it("excludes and reports a large untracked file, and a restore leaves it alone", async () => {
    const r = repo();
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 7);
    writeFileSync(r.path("big.bin"), big);
    const snap = r.ok("snapshot");
    expect(excludedAt(snap, "big.bin")).toEqual({
      path: "big.bin",
      reason: "large-file",
      bytes: big.length,
      files: 1,
    });
    expect(await filesOf(r, snap.id)).not.toContain("big.bin");
    writeFileSync(r.path("big.bin"), "small now\n");
    r.ok("restore", snap.id);
    expect(r.read("big.bin")).toBe("small now\n");
  });

  it("excludes the outermost large untracked directory with its file count, also under a tracked parent", async () => {
    const r = repo({ "src/main.ts": "x\n" });
    const gen: Record<string, string> = {};
    for (let i = 0; i < 201; i++) gen[`src/gen/f${i}.ts`] = `${i}\n`;
    const out: Record<string, string> = {};
    for (let i = 0; i < 150; i++) {
      out[`out/a/f${i}`] = "a";
      out[`out/b/f${i}`] = "b";
    }
    r.write({ ...gen, ...out, "src/small/one.ts": "1\n" });
    const snap = r.ok("snapshot");
    expect(excludedAt(snap, "src/gen")).toMatchObject({ reason: "large-dir", files: 201 });
    expect(excludedAt(snap, "out")).toMatchObject({ reason: "large-dir", files: 300 });
    expect(excludedAt(snap, "out/a")).toBeUndefined();
    expect(excludedAt(snap, "src")).toBeUndefined(); // the tracked parent is not an untracked directory
    const files = await filesOf(r, snap.id);
    expect(files).toContain("src/small/one.ts");
    expect(files.some((f) => f.startsWith("src/gen/") || f.startsWith("out/"))).toBe(false);
    r.remove("src/small");
    r.write({ "src/gen/f0.ts": "edited\n" });
    const report = r.ok("restore", snap.id);
    expect(report.deleted).toEqual([]);
    expect(r.read("src/gen/f0.ts")).toBe("edited\n");
    expect(readdirSync(r.path("out/a"))).toHaveLength(150);
    expect(r.read("src/small/one.ts")).toBe("1\n");
  });

  it("never reports the workspace root as a large directory", () => {
    const r = repo({});
    const files: Record<string, string> = {};
    for (let i = 0; i < 205; i++) files[`f${i}`] = "x";
    r.write(files);
    const snap = r.ok("snapshot");
    expect(snap.excluded).toEqual([]);
    expect(snap.fileCount).toBe(205);
  });

  it("counts dependency dirs relative to the workspace: from a subdirectory, and inside one", async () => {
    const r = repo({ "web/app.js": "1\n", "node_modules/pkg/tracked.js": "t\n" });
    r.write({
      "node_modules/pkg/index.js": "x",
      "node_modules/pkg/lib/a.js": "y",
      "web/node_modules/p/i.js": "z",
      "web/node_modules/p/j.js": "z",
      "web/src/node_modules/q.js": "q",
      // Listed right after node_modules' files, and no part of them.
      "node_modules_old/a.js": "kept",
    });
    sandbox.git(r.path("node_modules/pkg/lib"), "init", "-q"); // a repository inside one: still the dir's
    const whole = r.ok("snapshot");
    expect(whole.excluded.filter((e: { reason: string }) => e.reason === "dependency-dir")).toEqual([
      { path: "node_modules", reason: "dependency-dir", files: 2 },
      { path: "web/node_modules", reason: "dependency-dir", files: 2 },
      { path: "web/src/node_modules", reason: "dependency-dir", files: 1 },
    ]);
    expect(await filesOf(r, whole.id)).toContain("node_modules_old/a.js");
    const web = sandbox.ok(r.path("web"), "snapshot");
    expect(web.excluded).toEqual([
      { path: "node_modules", reason: "dependency-dir", files: 2 },
      { path: "src/node_modules", reason: "dependency-dir", files: 1 },
    ]);
    expect(web.fileCount).toBe(1);
    // A workspace inside node_modules is not one to the workspace: its files are captured.
    const inside = sandbox.ok(r.path("node_modules/pkg"), "snapshot");
    expect(inside.excluded).toEqual([{ path: "lib", reason: "nested-repo" }]);
    expect(sandbox.ok(r.path("node_modules/pkg"), "show", inside.id).files.sort()).toEqual([
      "index.js",
      "tracked.js",
    ]);
  });

  it("excludes dependency dirs with file counts, captures tracked files under them, preserves them on restore", async () => {
    const r = repo({ "build/keep.txt": "tracked\n", "app.js": "1\n" });
    r.write({
      "node_modules/pkg/index.js": "x",
      "node_modules/pkg/lib/a.js": "y",
      "web/node_modules/p/i.js": "z",
      "build/out.o": "obj",
      "py/__pycache__/m.pyc": "c",
    });
    const snap = r.ok("snapshot");
    expect(excludedAt(snap, "node_modules")).toMatchObject({ reason: "dependency-dir", files: 2 });
    expect(excludedAt(snap, "web/node_modules")).toMatchObject({ reason: "dependency-dir", files: 1 });
    expect(excludedAt(snap, "build")).toMatchObject({ reason: "dependency-dir", files: 1 });
    expect(excludedAt(snap, "py/__pycache__")).toMatchObject({ reason: "dependency-dir", files: 1 });
    const files = await filesOf(r, snap.id);
    expect(files).toContain("build/keep.txt");
    expect(files.filter((f) => f.includes("node_modules") || f === "build/out.o")).toEqual([]);
    r.write({
      "node_modules/pkg/index.js": "upgraded",
      "node_modules/new/n.js": "n",
      "build/keep.txt": "edit\n",
    });
    r.remove("node_modules/pkg/lib");
    const report = r.ok("restore", snap.id);
    expect(report.written).toEqual(["build/keep.txt"]);
    expect(report.deleted).toEqual([]);
    expect(r.read("node_modules/pkg/index.js")).toBe("upgraded");
    expect(r.read("node_modules/new/n.js")).toBe("n");
    expect(r.exists("node_modules/pkg/lib")).toBe(false);
    expect(r.read("build/keep.txt")).toBe("tracked\n");
  });

  it("reports a nested repository and never enters it", async () => {
    const r = repo({ "a.txt": "a\n" });
    const inner = sandbox.repo(`${path.basename(r.dir)}/vendor/lib`, { "lib.c": "int x;\n" });
    const snap = r.ok("snapshot");
    expect(excludedAt(snap, "vendor/lib")).toMatchObject({ reason: "nested-repo" });
    expect(await filesOf(r, snap.id)).toEqual(["a.txt"]);
    inner.write({ "lib.c": "changed\n" });
    r.ok("restore", snap.id);
    expect(inner.read("lib.c")).toBe("changed\n");
  });

  it("records a null parent on an unborn branch and restores from it", () => {
    const dir = sandbox.dir("unborn");
    sandbox.git(dir, "init", "-q", "-b", "main");
    writeFileSync(path.join(dir, "first.txt"), "1\n");
    const snap = sandbox.ok(dir, "snapshot");
    expect(snap.parent).toBeNull();
    expect(snap.fileCount).toBe(1);
    writeFileSync(path.join(dir, "first.txt"), "2\n");
    writeFileSync(path.join(dir, "second.txt"), "2\n");
    const report = sandbox.ok(dir, "restore", snap.id);
    expect(report.deleted).toEqual(["second.txt"]);
    expect(existsSync(path.join(dir, "second.txt"))).toBe(false);
  });

  it("records the HEAD commit as parent and a custom message", async () => {
    const r = repo();
    const head = r.git("rev-parse", "HEAD").trim();
    const snap = r.ok("snapshot", "-m", "before the refactor");
    expect(snap.parent).toBe(head);
    expect(snap.message).toBe("before the refactor");
    expect((await listIn(r))[0]).toMatchObject({ id: snap.id, message: "before the refactor" });
  });

  it("captures a force-included ignored file and restores it", async () => {
    const r = repo({ ".gitignore": "*.env\nsecrets/\n" });
    r.write({ "app.env": "KEY=1\n", "other.env": "no\n", "secrets/a": "A", "secrets/b/c": "C" });
    const snap = r.ok("snapshot", "--include", "app.env", "--include", "secrets");
    const files = await filesOf(r, snap.id);
    expect(files).toEqual(expect.arrayContaining(["app.env", "secrets/a", "secrets/b/c"]));
    expect(files).not.toContain("other.env");
    r.write({ "app.env": "KEY=2\n", "secrets/a": "changed" });
    r.ok("restore", snap.id);
    expect(r.read("app.env")).toBe("KEY=1\n");
    expect(r.read("secrets/a")).toBe("A");
  });

  it("does not report a dependency or large directory an include captured whole as left out", async () => {
    const r = repo({ "a.txt": "a\n", ".ghostcommit.json": JSON.stringify({ largeDirFiles: 3 }) });
    r.write({ "node_modules/x/index.js": "x\n", "node_modules/y.js": "y\n" });
    r.write({ "fixtures/1": "1", "fixtures/2": "2", "fixtures/3": "3", "fixtures/4": "4" });
    const plain = r.ok("snapshot");
    expect(plain.excluded.map((e: any) => `${e.path}:${e.reason}`)).toEqual([
      "fixtures:large-dir",
      "node_modules:dependency-dir",
    ]);
    const whole = r.ok("snapshot", "--include", "node_modules", "--include", "fixtures");
    expect(whole.excluded).toEqual([]);
    expect(await filesOf(r, whole.id)).toEqual(
      expect.arrayContaining(["node_modules/x/index.js", "fixtures/4"]),
    );
    // One file taken from a directory leaves the rest of it out, and says so.
    const one = r.ok("snapshot", "--include", "node_modules/y.js");
    expect(one.excluded.map((e: any) => e.path)).toEqual(["fixtures", "node_modules"]);
    expect(await filesOf(r, one.id)).toContain("node_modules/y.js");
  });

  it("refuses an include outside the workspace with exit 1 and writes nothing", async () => {
    const r = repo();
    sandbox.dir("outside");
    writeFileSync(path.join(sandbox.home, "outside", "x"), "x");
    for (const given of ["../outside/x", path.join(sandbox.home, "outside", "x"), "sub/../../outside/x"]) {
      const result = r.cli(["snapshot", "--include", given, "--json"]);
      expect(result.status).toBe(1);
      expect(result.json.error.code).toBe("outside-workspace");
      expect(result.stderr).toMatch(/^ghostcommit: /);
    }
    expect(await listIn(r)).toEqual([]);
  });

  it("keeps ignored files as they are: changed, new and deleted ones", async () => {
    const r = repo({ ".gitignore": "*.log\n", "a.txt": "a\n" });
    r.write({ "kept.log": "old\n", "gone.log": "will go\n" });
    const snap = r.ok("snapshot");
    expect(await filesOf(r, snap.id)).toEqual([".gitignore", "a.txt"]);
    r.write({ "kept.log": "new content\n", "fresh.log": "fresh\n", "a.txt": "changed\n" });
    r.remove("gone.log");
    const report = r.ok("restore", snap.id);
    expect(report.written).toEqual(["a.txt"]);
    expect(report.deleted).toEqual([]);
    expect(r.read("kept.log")).toBe("new content\n");
    expect(r.read("fresh.log")).toBe("fresh\n");
    expect(r.exists("gone.log")).toBe(false);
  });

  it("does not delete a file below a directory that was ignored at the snapshot, whatever a deeper .gitignore said", async () => {
    const r = repo({ ".gitignore": "tmp/\n", "a.txt": "a\n" });
    r.write({ "tmp/.gitignore": "!keep.txt\n", "tmp/keep.txt": "ignored with its directory\n" });
    r.git("add", "-f", "tmp/.gitignore");
    r.git("commit", "-qm", "tracked .gitignore inside an ignored directory");
    const snap = r.ok("snapshot");
    expect((await filesOf(r, snap.id)).sort()).toEqual([".gitignore", "a.txt", "tmp/.gitignore"]);
    r.write({ ".gitignore": "" }); // now tmp/keep.txt is captured
    const report = r.ok("restore", snap.id);
    expect(report.deleted).toEqual([]);
    expect(r.read("tmp/keep.txt")).toBe("ignored with its directory\n");
  });

  it("honours the user's core.excludesFile set in the repository config", async () => {
    const r = repo({ "a.txt": "a\n" });
    const excludes = path.join(sandbox.home, `excludes-${path.basename(r.dir)}`);
    writeFileSync(excludes, "*.secret\n");
    r.git("config", "core.excludesFile", excludes);
    r.write({ "old.secret": "s\n", "u.txt": "u\n" });
    const snap = r.ok("snapshot");
    expect((await filesOf(r, snap.id)).sort()).toEqual(["a.txt", "u.txt"]);
    r.write({ "new.secret": "n\n", "old.secret": "changed\n" });
    const report = r.ok("restore", snap.id);
    expect(report.deleted).toEqual([]);
    expect(r.read("new.secret")).toBe("n\n");
    expect(r.read("old.secret")).toBe("changed\n");
  });

  it("honours core.excludesFile from the user's global config and from a file the repository config includes", async () => {
    // Status runs from a git directory of its own: a global value it reads itself, a repository
    // one (here behind [include]) must be passed on.
    const r = repo({ "a.txt": "a\n" });
    const globalExcludes = path.join(sandbox.home, `global-excludes-${path.basename(r.dir)}`);
    writeFileSync(globalExcludes, "*.gsecret\n");
    r.git("config", "--global", "core.excludesFile", globalExcludes);
    try {
      r.write({ "k.gsecret": "g\n", "u.txt": "u\n" });
      expect((await filesOf(r, r.ok("snapshot").id)).sort()).toEqual(["a.txt", "u.txt"]);

      const included = path.join(sandbox.home, `included-${path.basename(r.dir)}`);
      const repoExcludes = path.join(sandbox.home, `repo-excludes-${path.basename(r.dir)}`);
      writeFileSync(repoExcludes, "*.rsecret\n");
      writeFileSync(included, `[core]\n\texcludesFile = ${repoExcludes}\n`);
      r.git("config", "include.path", included);
      r.write({ "k.rsecret": "r\n" });
      // The repository's value replaces the global one, as in the user's own git.
      expect((await filesOf(r, r.ok("snapshot").id)).sort()).toEqual(["a.txt", "k.gsecret", "u.txt"]);
    } finally {
      r.git("config", "--global", "--unset", "core.excludesFile");
    }
  });

  // Found in a trial: the user's config read once and cached by its files' stamps missed a change
  // in a file it includes (dotfiles' `[include] path = ~/.gitconfig.local`), so a restore took a
  // file the user's git ignored now for one it did not, and deleted it.
  it("sees a change in a config file the user's config includes: a restore keeps a file ignored through it", () => {
    const r = repo({ "a.txt": "a\n" });
    const name = path.basename(r.dir);
    const [tmpRules, logRules, included] = ["tmp", "log", "inc"].map((n) =>
      path.join(sandbox.home, `${n}-${name}`),
    );
    writeFileSync(tmpRules, "*.tmp\n");
    writeFileSync(logRules, "*.log\n");
    writeFileSync(included, `[core]\n\texcludesFile = ${tmpRules}\n`);
    r.git("config", "--global", "include.path", included);
    try {
      const before = r.ok("snapshot").id;
      writeFileSync(included, `[core]\n\texcludesFile = ${logRules}\n`); // only the included file changes
      r.write({ "build.log": "private\n" });
      expect(r.git("status", "--porcelain", "--ignored")).toBe("!! build.log\n");
      expect(r.ok("restore", before).deleted).toEqual([]);
      expect(r.read("build.log")).toBe("private\n");
    } finally {
      r.git("config", "--global", "--unset", "include.path");
    }
  });

  it("does not delete a file that was ignored when the snapshot was taken but is not now", () => {
    const r = repo({ ".gitignore": "*.log\n", "a.txt": "a\n" });
    r.write({ "debug.log": "log\n" });
    const snap = r.ok("snapshot");
    r.write({ ".gitignore": "" });
    const report = r.ok("restore", snap.id);
    expect(report.deleted).toEqual([]);
    expect(r.read("debug.log")).toBe("log\n");
    expect(r.read(".gitignore")).toBe("*.log\n");
  });
});

describe(".ghostignore", () => {
  it("keeps matching paths, tracked or not, out of snapshots and out of every restore", async () => {
    const r = repo({ ".ghostignore": "secret/\n*.key\n", "config.key": "tracked key\n", "a.txt": "a\n" });
    r.write({ "secret/token": "t\n", "secret/deep/x": "x\n" });
    const snap = r.ok("snapshot");
    expect((await filesOf(r, snap.id)).sort()).toEqual([".ghostignore", "a.txt"]);
    expect(excludedAt(snap, "config.key")).toMatchObject({ reason: "ignore-file" });
    expect(excludedAt(snap, "secret")).toMatchObject({ reason: "ignore-file", files: 2 });
    r.write({ "config.key": "changed\n", "new.key": "n\n", "a.txt": "agent\n" });
    r.remove("secret/token");
    const report = r.ok("restore", snap.id);
    expect(report.written).toEqual(["a.txt"]);
    expect(report.deleted).toEqual([]);
    expect(r.read("config.key")).toBe("changed\n");
    expect(r.read("new.key")).toBe("n\n");
    expect(r.exists("secret/token")).toBe(false);
  });

  it("the repository's own rules hold in a subdirectory's workspace too, the deepest file deciding", () => {
    // An agent started in src/ (a workspace of its own) must not capture what the root keeps out.
    const r = repo({ ".ghostignore": "*.secret\nsrc/gen/\n", "src/a.txt": "a\n" });
    r.write({
      "src/.ghostignore": "!public.secret\n",
      "src/db.secret": "PASSWORD=1\n",
      "src/public.secret": "shown on purpose\n",
      "src/gen/out.js": "generated\n",
      "src/deep/key.secret": "KEY=2\n",
    });
    const snap = r.sandbox.ok(r.path("src"), "snapshot");
    expect(snap.fileCount).toBe(3);
    const shown = r.sandbox.ok(r.path("src"), "show", snap.id);
    expect(shown.files.sort()).toEqual([".ghostignore", "a.txt", "public.secret"]);
    expect(
      shown.excluded.map((e: { path: string; reason: string }) => `${e.path} ${e.reason}`).sort(),
    ).toEqual(["db.secret ignore-file", "deep/key.secret ignore-file", "gen ignore-file"]);
    // Nor does a restore there write or delete them.
    r.write({ "src/db.secret": "PASSWORD=changed\n", "src/a.txt": "agent\n" });
    r.sandbox.ok(r.path("src"), "restore", snap.id);
    expect([r.read("src/a.txt"), r.read("src/db.secret")]).toEqual(["a\n", "PASSWORD=changed\n"]);
    // The root's workspace reads src/.ghostignore too: the same files, the same answer.
    expect(
      r
        .ok("snapshot")
        .excluded.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(["src/db.secret", "src/deep/key.secret", "src/gen"]);
  });

  // Found in a trial: reading a FIFO there waited forever (a hook past its agent's timeout).
  it("refuses a .ghostignore or .ghostcommit.json that is a FIFO instead of waiting on it", () => {
    const r = repo({ "a.txt": "a\n" });
    for (const name of [".ghostignore", ".ghostcommit.json"]) {
      execFileSync("mkfifo", [r.path(name)]);
      const run = r.cli(["snapshot", "--json"]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`${name}: it is a FIFO, not a file`);
      r.remove(name);
    }
  });

  // Found in a trial: docs/.ghostignore kept docs/apikey.txt out of a workspace started in docs/,
  // but the root's snapshots (and a push of them) held it.
  it("a .ghostignore below the root keeps its directory's paths out of the root's snapshots, tracked or not", async () => {
    const r = repo({ "docs/.ghostignore": "apikey.txt\n", "docs/apikey.txt": "SECRET=1\n", "a.txt": "a\n" });
    r.write({ "docs/other/apikey.txt": "SECRET=2\n", "apikey.txt": "not below docs\n" });
    const first = r.ok("snapshot");
    expect((await filesOf(r, first.id)).sort()).toEqual(["a.txt", "apikey.txt", "docs/.ghostignore"]);
    expect(first.excluded.map((e: { path: string }) => e.path).sort()).toEqual([
      "docs/apikey.txt",
      "docs/other/apikey.txt",
    ]);
    // One git has not seen yet counts from the first snapshot after it appears.
    r.write({ "lib/.ghostignore": "*.pem\n", "lib/key.pem": "PRIVATE\n", "lib/ok.js": "ok\n" });
    const second = r.ok("snapshot");
    expect(await filesOf(r, second.id)).not.toContain("lib/key.pem");
    expect(excludedAt(second, "lib/key.pem")).toMatchObject({ reason: "ignore-file" });
    expect(await filesOf(r, second.id)).toContain("lib/ok.js");
    // Its rules gone, the file is captured again; a restore of the snapshot that kept it out
    // neither deletes nor writes it (that snapshot proves nothing about it).
    r.remove("lib/.ghostignore");
    expect(await filesOf(r, r.ok("snapshot").id)).toContain("lib/key.pem");
    r.write({ "lib/key.pem": "PRIVATE, edited\n", "lib/made-since.pem": "PRIVATE 2\n" });
    const report = r.ok("restore", second.id);
    expect(report.deleted).toEqual([]);
    expect(r.read("lib/key.pem")).toBe("PRIVATE, edited\n");
    expect(r.read("lib/made-since.pem")).toBe("PRIVATE 2\n");
    expect(r.read("lib/.ghostignore")).toBe("*.pem\n");
  });
});

describe(".ghostignore below the root of a plain directory", () => {
  // Found in a trial: config/.ghostignore's *.secret let config/db.secret into a plain folder's
  // snapshots (only the root's was read there), where a repository's would have kept it out.
  it("keeps its directory's files out, from the first snapshot and once it appears later", async () => {
    const dir = new Repo(sandbox, sandbox.dir("plain-nested-ghostignore"));
    dir.write({ "a.txt": "a\n", "config/.ghostignore": "*.secret\n", "config/db.secret": "PW=1\n" });
    const first = dir.ok("snapshot");
    expect(await filesOf(dir, first.id)).toEqual(["a.txt", "config/.ghostignore"]);
    expect(excludedAt(first, "config/db.secret")).toMatchObject({ reason: "ignore-file" });
    // Captured before its rule came: the next snapshot leaves it out, and a restore of the first
    // neither writes nor deletes what the rule names.
    dir.write({ "lib/key.pem": "PRIVATE\n", "lib/ok.js": "ok\n" });
    dir.ok("snapshot");
    dir.write({ "lib/.ghostignore": "*.pem\n", "config/more.secret": "PW=2\n" });
    const later = dir.ok("snapshot");
    expect(await filesOf(dir, later.id)).toEqual([
      "a.txt",
      "config/.ghostignore",
      "lib/.ghostignore",
      "lib/ok.js",
    ]);
    dir.write({ "lib/key.pem": "PRIVATE, edited\n" });
    dir.ok("restore", first.id);
    expect([dir.read("lib/key.pem"), dir.read("config/more.secret")]).toEqual([
      "PRIVATE, edited\n",
      "PW=2\n",
    ]);
  });
});

describe("scope and settings", () => {
  it("a subdirectory workspace captures and restores only below it", async () => {
    const r = repo({ "top.txt": "top\n", "sub/in.txt": "in\n" });
    r.write({
      "top.txt": "top edited\n",
      "sub/in.txt": "in edited\n",
      "sub/new.txt": "n\n",
      "outside-new.txt": "o",
    });
    const sub = r.path("sub");
    const snap = sandbox.ok(sub, "snapshot");
    expect(sandbox.ok(sub, "show", snap.id).files.sort()).toEqual(["in.txt", "new.txt"]);
    expect(snap.fileCount).toBe(2);
    r.write({
      "top.txt": "top again\n",
      "sub/in.txt": "agent\n",
      "sub/later.txt": "l",
      "outside-later.txt": "o",
    });
    const report = sandbox.ok(sub, "restore", snap.id);
    expect(report.written).toEqual(["in.txt"]);
    expect(report.deleted).toEqual(["later.txt"]);
    expect(r.read("sub/in.txt")).toBe("in edited\n");
    expect(r.read("top.txt")).toBe("top again\n");
    expect(r.read("outside-later.txt")).toBe("o");
    expect(r.read("outside-new.txt")).toBe("o");
    // -C names the same workspace from elsewhere, and the repository root is a different one.
    expect(sandbox.ok(r.dir, "-C", "sub", "list").map((s: any) => s.id)).toEqual([report.safety, snap.id]);
    expect(await listIn(r)).toEqual([]);
  });

  it("honours largeFileBytes from .ghostcommit.json", async () => {
    const r = repo({ ".ghostcommit.json": '{"largeFileBytes": 100}\n' });
    r.write({ "medium.txt": "m".repeat(101), "small.txt": "s".repeat(100) });
    const snap = r.ok("snapshot");
    expect(excludedAt(snap, "medium.txt")).toMatchObject({ reason: "large-file", bytes: 101 });
    expect(await filesOf(r, snap.id)).toContain("small.txt");
  });

  it("does nothing when .ghostcommit.json says enabled: false", async () => {
    const r = repo({ ".ghostcommit.json": '{"enabled": false}\n' });
    const result = r.cli(["snapshot", "--json"]);
    expect(result.status).toBe(1);
    expect(result.json.error.code).toBe("disabled");
    const workspaces = path.join(sandbox.home, "data", "workspaces");
    const before = existsSync(workspaces) ? readdirSync(workspaces).length : 0;
    r.cli(["snapshot"]);
    expect(await listIn(r)).toEqual([]);
    expect(r.ok("gc")).toEqual({
      dropped: [],
      kept: [],
      bytesBefore: 0,
      bytesAfter: 0,
      forgottenSessions: 0,
    });
    expect(existsSync(workspaces) ? readdirSync(workspaces).length : 0).toBe(before);
  });
});
