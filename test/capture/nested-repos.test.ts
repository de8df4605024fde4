import { renameSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Repo } from "../helpers/repo.js";
import { fileSandbox, filesOf, gitDirDigest, treeDigest } from "../helpers/support.js";
import { openIn, snapshotIn } from "../session/support.js";
import { logIn, doctorIn } from "../helpers/in-process.js";

const { sandbox, repo } = fileSandbox();
let folders = 0;

/** A plain folder (no git) holding a repository per name, each with tracked, untracked and ignored files. */
function folderOfRepos(names: string[]): { folder: Repo; repos: Repo[] } {
  const name = `folder${++folders}`;
  const folder = new Repo(sandbox, sandbox.dir(name));
  const repos = names.map((sub) => {
    const inner = sandbox.repo(`${name}/${sub}`, {
      ".gitignore": "*.log\n",
      "a.txt": `${sub} a\n`,
      "src/m.js": `${sub} m\n`,
    });
    inner.write({ "untracked.txt": `${sub} u\n`, "debug.log": `${sub} ignored\n` });
    return inner;
  });
  return { folder, repos };
}

describe("a folder holding several repositories", () => {
  it("a restore to a snapshot taken before a repository was cloned there deletes nothing inside it", async () => {
    const folder = new Repo(sandbox, sandbox.dir(`folder${++folders}`));
    folder.write({ "notes.md": "top\n" });
    const early = await snapshotIn(folder);
    const cloned = sandbox.repo(`${path.basename(folder.dir)}/be`, { "main.c": "code\n" });
    cloned.write({ "wip.c": "uncommitted\n" });
    folder.write({ "later.md": "later\n" });
    const gitDir = gitDirDigest(cloned);
    const report = folder.ok("restore", early.id);
    // The folder's own new file goes; the repository, work tree and .git alike, stays whole.
    expect(report.deleted).toEqual(["later.md"]);
    expect(report.skipped).toEqual([
      { path: "be/main.c", reason: "excluded" },
      { path: "be/wip.c", reason: "excluded" },
    ]);
    expect([cloned.read("main.c"), cloned.read("wip.c")]).toEqual(["code\n", "uncommitted\n"]);
    expect(gitDirDigest(cloned)).toEqual(gitDir);
  });

  it("a rewind of the turn that made a repository deletes nothing inside it, as a restore would not", async () => {
    const folder = new Repo(sandbox, sandbox.dir(`folder${++folders}`));
    folder.write({ "notes.md": "top\n" });
    folder.ok("turn", "begin", "--session", "s", "--turn", "1");
    // The agent runs `git init docs` and writes there, stages one file, and writes at the top.
    const docs = sandbox.repo(`${path.basename(folder.dir)}/docs`, {});
    docs.write({ "guide.md": "guide\n", "api.md": "api\n", "secret.txt": "s\n" });
    // Its edit tool writes the .gitignore: the hook's touch finds it absent before the write.
    folder.ok("touch", "--session", "s", "docs/.gitignore");
    docs.write({ ".gitignore": "secret.txt\n" });
    docs.git("add", "guide.md");
    folder.write({ "later.md": "later\n" });
    folder.ok("turn", "end", "--session", "s", "--turn", "1");
    const gitDir = gitDirDigest(docs);
    const rewind = folder.ok("rewind", "--session", "s", "--to", "1");
    expect(rewind.deleted).toEqual(["later.md"]);
    expect(rewind.skipped).toEqual([
      { path: "docs/.gitignore", reason: "excluded" },
      { path: "docs/api.md", reason: "excluded" },
      { path: "docs/guide.md", reason: "excluded" },
    ]);
    expect([".gitignore", "api.md", "guide.md", "secret.txt"].map((f) => docs.read(f))).toEqual([
      "secret.txt\n",
      "api\n",
      "guide\n",
      "s\n",
    ]);
    expect(gitDirDigest(docs)).toEqual(gitDir);
    expect(docs.git("status", "--porcelain")).toBe("A  guide.md\n?? .gitignore\n?? api.md\n");
  });

  it("a restore or rewind keeps what a repository ignored then, once its .git is removed", async () => {
    const { folder, repos } = folderOfRepos(["fe"]);
    const [fe] = repos;
    const aside = (inner: Repo) => `${path.dirname(inner.dir)}-${path.basename(inner.dir)}.git`; // outside the folder
    const snap = await snapshotIn(folder);
    // Without its .git, fe is a plain directory: debug.log is captured now, yet *.log kept it out then.
    renameSync(fe.path(".git"), aside(fe));
    const report = folder.ok("restore", snap.id);
    expect(report.deleted).toEqual([]);
    expect(report.skipped).toEqual([{ path: "fe/debug.log", reason: "excluded" }]);
    expect(fe.read("debug.log")).toBe("fe ignored\n");

    // The same for a rewind of the turn that removed it.
    const other = folderOfRepos(["be"]);
    const [be] = other.repos;
    other.folder.ok("turn", "begin", "--session", "s", "--turn", "1");
    renameSync(be.path(".git"), aside(be));
    be.write({ "a.txt": "agent\n" });
    const ended = other.folder.ok("turn", "end", "--session", "s", "--turn", "1");
    expect(ended.changed).toEqual(["be/a.txt", "be/debug.log"]);
    const rewind = other.folder.ok("rewind", "--to", "1");
    expect([rewind.written, rewind.deleted]).toEqual([["be/a.txt"], []]);
    expect([be.read("a.txt"), be.read("debug.log")]).toEqual(["be a\n", "be ignored\n"]);
  });

  it("a restore does not write back a file a held repository ignores now, so its undo is exact", async () => {
    const folder = new Repo(sandbox, sandbox.dir(`folder${++folders}`));
    folder.write({ "fe/a.js": "a\n", "fe/x.log": "log\n" });
    const plain = await snapshotIn(folder);
    const fe = sandbox.repo(`${path.basename(folder.dir)}/fe`, { ".gitignore": "*.log\n" });
    fe.remove("x.log");
    const report = folder.ok("restore", plain.id);
    // fe's own rules ignore x.log: the safety snapshot could not hold it, so no undo could remove it.
    expect(report.written).toEqual([]);
    expect(report.skipped).toContainEqual({ path: "fe/x.log", reason: "excluded" });
    expect(fe.exists("x.log")).toBe(false);
    folder.ok("restore", report.safety);
    expect([fe.exists("x.log"), fe.read(".gitignore"), fe.read("a.js")]).toEqual([false, "*.log\n", "a\n"]);
  });

  it("captures each repository by its own rules and restores into it, its .git and index untouched", async () => {
    const { folder, repos } = folderOfRepos(["fe", "be"]);
    const [fe, be] = repos;
    folder.write({ "notes.md": "top\n" });
    const snap = folder.ok("snapshot");
    expect(snap.excluded).toEqual([]);
    expect((await filesOf(folder, snap.id)).sort()).toEqual([
      "be/.gitignore",
      "be/a.txt",
      "be/src/m.js",
      "be/untracked.txt",
      "fe/.gitignore",
      "fe/a.txt",
      "fe/src/m.js",
      "fe/untracked.txt",
      "notes.md",
    ]);
    const statuses = [fe.status(), be.status()]; // (git status may refresh the index: before the digest)
    const gitDirs = [gitDirDigest(fe), gitDirDigest(be)];

    fe.write({ "a.txt": "edited\n", "src/new.js": "new\n", "debug.log": "ignored, edited\n" });
    fe.remove("untracked.txt");
    be.remove("src/m.js");
    be.write({ "new.txt": "new\n", ".gitignore": "# nothing ignored now\n" }); // be/debug.log is captured now
    const report = folder.ok("restore", snap.id);
    expect(report.written.sort()).toEqual(["be/.gitignore", "be/src/m.js", "fe/a.txt", "fe/untracked.txt"]);
    expect(report.deleted.sort()).toEqual(["be/new.txt", "fe/src/new.js"]);
    // be/debug.log was ignored by be's own rules when the snapshot was taken: not proven absent.
    expect(report.skipped).toEqual([{ path: "be/debug.log", reason: "excluded" }]);
    expect([fe.read("a.txt"), fe.read("untracked.txt"), be.read("src/m.js")]).toEqual([
      "fe a\n",
      "fe u\n",
      "be m\n",
    ]);
    expect([fe.exists("src/new.js"), be.exists("new.txt")]).toEqual([false, false]);
    expect([fe.read("debug.log"), be.read("debug.log")]).toEqual(["ignored, edited\n", "be ignored\n"]);
    expect([gitDirDigest(fe), gitDirDigest(be)]).toEqual(gitDirs);

    // A rewind writes into them by the same rules.
    folder.ok("turn", "begin", "--session", "s", "--turn", "1");
    fe.write({ "src/m.js": "agent\n" });
    be.write({ "added.txt": "agent\n" });
    folder.ok("turn", "end", "--session", "s", "--turn", "1");
    const rewind = folder.ok("rewind", "--to", "1");
    expect([rewind.written, rewind.deleted]).toEqual([["fe/src/m.js"], ["be/added.txt"]]);
    expect([gitDirDigest(fe), gitDirDigest(be)]).toEqual(gitDirs);
    expect([fe.status(), be.status()]).toEqual(statuses);
  });

  it("a rewind undoes an edit to a repository's file the agent touched or a dry run looked at", () => {
    // Repositories of one file each: nothing else in them shows to the folder's own walk.
    const oneFileRepo = () => {
      const folder = new Repo(sandbox, sandbox.dir(`folder${++folders}`));
      const be = sandbox.repo(`${path.basename(folder.dir)}/be`, { "main.go": "m\n" });
      return { folder, be, gitDir: gitDirDigest(be) };
    };
    const agentTurn = (folder: Repo, be: Repo, touch: boolean) => {
      folder.ok("turn", "begin", "--session", "s", "--turn", "1");
      if (touch) folder.ok("touch", "--session", "s", "be/main.go"); // as an agent's edit hook does
      be.write({ "main.go": "m2\n" });
      folder.ok("turn", "end", "--session", "s", "--turn", "1");
    };
    const touched = oneFileRepo();
    agentTurn(touched.folder, touched.be, true);
    const rewind = touched.folder.ok("rewind", "--to", "1");
    expect([rewind.written, rewind.skipped, touched.be.read("main.go")]).toEqual([["be/main.go"], [], "m\n"]);
    touched.folder.ok("redo", "--session", "s");
    expect(touched.be.read("main.go")).toBe("m2\n");
    expect(gitDirDigest(touched.be)).toEqual(touched.gitDir);

    const previewed = oneFileRepo();
    agentTurn(previewed.folder, previewed.be, false);
    const dry = previewed.folder.ok("rewind", "--to", "1", "--dry-run");
    const real = previewed.folder.ok("rewind", "--to", "1");
    expect([dry.written, real.written, real.skipped]).toEqual([["be/main.go"], ["be/main.go"], []]);
    expect(previewed.be.read("main.go")).toBe("m\n");
    expect(gitDirDigest(previewed.be)).toEqual(previewed.gitDir);
  });

  it("a touched file a repository ignores is captured, and a rewind puts it back", () => {
    const { folder, repos } = folderOfRepos(["be"]);
    const [be] = repos;
    folder.ok("turn", "begin", "--session", "s", "--turn", "1");
    folder.ok("touch", "--session", "s", "be/debug.log");
    be.write({ "debug.log": "agent\n" });
    folder.ok("turn", "end", "--session", "s", "--turn", "1");
    const rewind = folder.ok("rewind", "--to", "1");
    expect([rewind.written, rewind.skipped, be.read("debug.log")]).toEqual([
      ["be/debug.log"],
      [],
      "be ignored\n",
    ]);
  });

  it("never captures nor writes a bare repository or a separate git directory it holds", async () => {
    const folder = new Repo(sandbox, sandbox.dir(`folder${++folders}`));
    const app = sandbox.repo(`${path.basename(folder.dir)}/app`, { f: "v1\n" });
    sandbox.git(folder.dir, "clone", "-q", "--bare", app.dir, "origin.git");
    sandbox.git(folder.dir, "init", "-q", `--separate-git-dir=${folder.path("sep")}`, "lib");
    const snap = folder.ok("snapshot");
    expect(snap.excluded).toEqual([
      { path: "origin.git", reason: "nested-repo" },
      { path: "sep", reason: "nested-repo" },
    ]);
    expect(await filesOf(folder, snap.id)).toEqual(["app/f"]);

    app.git("remote", "add", "origin", "../origin.git");
    app.write({ f: "v2\n" });
    app.git("commit", "-qam", "v2");
    app.git("push", "-q", "origin", "HEAD:master");
    const bare = Object.fromEntries(treeDigest(folder.path("origin.git")));
    const report = folder.ok("restore", snap.id);
    expect([report.written, report.deleted, report.skipped]).toEqual([["app/f"], [], []]);
    // The push stays: its ref and objects are the bare repository's own.
    expect(Object.fromEntries(treeDigest(folder.path("origin.git")))).toEqual(bare);
    expect(sandbox.git(folder.path("origin.git"), "log", "--format=%s", "master").trim()).toBe("v2\ninitial");
  });

  it("a forced rewind reports as overwritten only the conflicts it writes or deletes, not those it leaves as excluded", () => {
    // The folder becomes a repository after turn 1 (`git init` at its root): fe/ is then a nested
    // repository, which a forced rewind leaves as it is.
    const folder = new Repo(sandbox, sandbox.dir(`folder${++folders}`));
    const fe = sandbox.repo(`${path.basename(folder.dir)}/fe`, { "a.js": "a\n" });
    folder.ok("turn", "begin", "--session", "s", "--turn", "1");
    fe.write({ "a.js": "b\n", "out.txt": "out\n" });
    folder.ok("turn", "end", "--session", "s", "--turn", "1");
    folder.ok("turn", "begin", "--session", "s", "--turn", "2");
    folder.git("init", "-q");
    folder.ok("turn", "end", "--session", "s", "--turn", "2");
    const forced = folder.ok("rewind", "--to", "1", "--force");
    expect([forced.written, forced.deleted, forced.overridden]).toEqual([[], [], undefined]);
    expect(forced.skipped.map((s: { path: string }) => s.path)).toContain("fe/a.js");
    expect([fe.read("a.js"), fe.read("out.txt")]).toEqual(["b\n", "out\n"]);
  });

  it("reports a repository over the plain-directory budget instead of walking it", async () => {
    const { folder } = folderOfRepos(["big", "small"]);
    folder.write({ ".ghostcommit.json": JSON.stringify({ budgetFiles: 2 }) });
    sandbox.git(folder.path("small"), "rm", "-q", "src/m.js");
    sandbox.git(folder.path("small"), "commit", "-qm", "smaller");
    const snap = folder.ok("snapshot");
    expect(snap.excluded).toEqual([{ path: "big", reason: "budget", files: 3 }]);
    expect((await filesOf(folder, snap.id)).filter((f) => f.startsWith("small/"))).toEqual([
      "small/.gitignore",
      "small/a.txt",
      "small/untracked.txt",
    ]);
  });
  it("treats a held repository's submodule as a git workspace treats its own", async () => {
    const lib = repo({ "lib.c": "v1\n" });
    lib.write({ "lib.c": "v2\n" });
    lib.git("commit", "-qam", "v2");
    const [v1, v2] = [lib.git("rev-parse", "HEAD~1").trim(), lib.git("rev-parse", "HEAD").trim()];
    const { folder, repos } = folderOfRepos(["app"]);
    const [app] = repos;
    app.addSubmodule(lib, "lib");
    app.write({ "lib/lib.c": "edited\n", "lib/new.c": "new\n" });
    const store = (await doctorIn(folder)).store as string;
    const inStore = (id: string) =>
      sandbox.git(folder.dir, `--git-dir=${store}/git`, "ls-tree", id, "app/lib").split(/\s/)[2];

    // By default: kept as the commit checked out in it, and a turn that checks out another changes it.
    const before = folder.ok("snapshot");
    expect((await filesOf(folder, before.id)).filter((f) => f.startsWith("app/lib"))).toEqual(["app/lib"]);
    expect(inStore(before.id)).toBe(v2);
    folder.ok("turn", "begin", "--session", "s", "--turn", "1");
    app.write({ "lib/lib.c": "v2\n" });
    sandbox.git(app.path("lib"), "checkout", "-q", v1);
    const ended = folder.ok("turn", "end", "--session", "s", "--turn", "1");
    expect([ended.changed, inStore(ended.after)]).toEqual([["app/lib"], v1]);
    sandbox.git(app.path("lib"), "checkout", "-q", v2);

    // With nestedRepos: capture, its files by its own rules, and restores write into it.
    folder.write({ ".ghostcommit.json": JSON.stringify({ nestedRepos: "capture" }) });
    app.write({ "lib/lib.c": "edited\n" });
    const snap = folder.ok("snapshot");
    expect(snap.excluded).toEqual([]);
    expect((await filesOf(folder, snap.id)).filter((f) => f.startsWith("app/lib"))).toEqual([
      "app/lib/lib.c",
      "app/lib/new.c",
    ]);
    const gitDir = gitDirDigest(app); // the submodule's git directory is in app's
    app.write({ "lib/lib.c": "agent\n", "lib/agent.c": "agent\n" });
    const report = folder.ok("restore", snap.id);
    expect([report.written, report.deleted]).toEqual([["app/lib/lib.c"], ["app/lib/agent.c"]]);
    expect(app.read("lib/lib.c")).toBe("edited\n");
    expect(gitDirDigest(app)).toEqual(gitDir);

    // Back to the snapshot that did not look into it: nothing inside it is proven absent.
    const old = folder.ok("restore", before.id);
    expect(old.deleted).toEqual([".ghostcommit.json"]);
    expect([app.read("lib/new.c"), app.read("lib/lib.c")]).toEqual(["new\n", "edited\n"]);
  });
});

describe("repositories nested in a git workspace", () => {
  /** A repository holding the submodule `lib` (lib.c) and the untracked repository `tools` with `files`. */
  const withSubmoduleAndRepo = (files: Record<string, string>) => {
    const lib = repo({ "lib.c": "v1\n" });
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "lib");
    sandbox.git(r.dir, "init", "-q", "tools");
    r.write(files);
    return r;
  };

  it("keep a submodule as the commit checked out in it, staged or not, and its turn records the change", async () => {
    const lib = repo({ "lib.c": "v1\n" });
    lib.write({ "lib.c": "v2\n" });
    lib.git("commit", "-qam", "v2");
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "lib");
    const gitlink = (id: string) => r.git("ls-tree", id, "lib").split(/\s/)[2];
    const [v1, v2] = [lib.git("rev-parse", "HEAD~1").trim(), lib.git("rev-parse", "HEAD").trim()];
    const store = (await doctorIn(r)).store as string;
    const inStore = (id: string) =>
      sandbox.git(r.dir, `--git-dir=${store}/git`, "ls-tree", id, "lib").split(/\s/)[2];
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    sandbox.git(r.path("lib"), "checkout", "-q", v1); // not staged in the superproject
    const ended = r.ok("turn", "end", "--session", "s", "--turn", "1");
    expect(ended.changed).toEqual(["lib"]);
    expect([gitlink("HEAD"), inStore(ended.after)]).toEqual([v2, v1]);
    expect(r.ok("diff", ended.after, "--name-status")).toEqual([]); // the work tree is as captured
    // Its rewind leaves the submodule (never entered), says so, and finds no conflict in it.
    const plan = r.ok("rewind", "--to", "1", "--dry-run");
    const rewound = r.cli(["rewind", "--to", "1", "--json"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    for (const report of [plan, rewound.json])
      expect(report.skipped).toEqual([{ path: "lib", reason: "excluded", detail: "submodule" }]);
    r.git("add", "lib"); // staged now: the same
    expect(inStore(r.ok("snapshot").id)).toBe(v1);
  });

  // Found in a trial: the refusal listed the submodule among the conflicts, which --force then
  // left as a submodule (never moved by a rewind) rather than overwrote.
  it("leave a submodule a turn moved out of a rewind's conflicts, uncertain or not", async () => {
    const lib = repo({ "lib.c": "v1\n" });
    lib.write({ "lib.c": "v2\n" });
    lib.git("commit", "-qam", "v2");
    const r = repo({ "top.txt": "top\n" });
    r.addSubmodule(lib, "lib");
    const session = (await openIn(sandbox, r.dir)).session("s");
    await session.beginTurn("1");
    sandbox.git(r.path("lib"), "checkout", "-q", "HEAD~1");
    r.write({ "top.txt": "changed with no tool call reporting it\n" });
    const ended = await session.endTurn("1", { everyToolMarked: true });
    expect(ended.changed).toEqual(["lib", "top.txt"]);
    const refused = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect([refused.json.conflicts, refused.json.uncertain]).toEqual([["top.txt"], ["top.txt"]]);
    const forced = r.ok("rewind", "--session", "s", "--to", "1", "--force");
    expect([forced.overridden, forced.written, forced.skipped]).toEqual([
      ["top.txt"],
      ["top.txt"],
      [{ path: "lib", reason: "excluded", detail: "submodule" }],
    ]);
  });

  // Found with Codex hooks: an apply_patch that edited a submodule's file made the turn's
  // snapshots hold that file in place of the submodule's gitlink, and diff call the submodule deleted.
  it("leave out a touched file inside a submodule or nested repository, keeping the gitlink", async () => {
    const r = withSubmoduleAndRepo({ "tools/run.sh": "run\n" });
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.ok("touch", "--session", "s", "lib/lib.c", "tools/run.sh", "a.txt");
    r.write({ "lib/lib.c": "edited in the submodule\n", "tools/run.sh": "edited\n", "a.txt": "agent\n" });
    expect(r.ok("turn", "end", "--session", "s", "--turn", "1").changed).toEqual(["a.txt"]);
    const [ended] = await logIn(r, "s");
    for (const id of [ended.before, ended.after])
      expect((await filesOf(r, id)).sort()).toEqual([".gitmodules", "a.txt", "lib"]);
    const diff = r.ok("diff", ended.before, ended.after);
    expect(diff.map((e: any) => [e.status, e.path])).toEqual([["modified", "a.txt"]]);
    const rewound = r.ok("rewind", "--to", "1");
    expect([rewound.written, rewound.deleted, rewound.skipped]).toEqual([["a.txt"], [], []]);
    expect([r.read("a.txt"), r.read("lib/lib.c"), r.read("tools/run.sh")]).toEqual([
      "a\n",
      "edited in the submodule\n",
      "edited\n",
    ]);
  });

  it("stay excluded by default and are captured by their own rules with nestedRepos: capture", async () => {
    const r = withSubmoduleAndRepo({
      "tools/.gitignore": "out/\n",
      "tools/run.sh": "run\n",
      "tools/out/cache": "c\n",
    });

    const before = r.ok("snapshot");
    expect(before.excluded).toEqual([{ path: "tools", reason: "nested-repo" }]);
    expect((await filesOf(r, before.id)).sort()).toEqual([".gitmodules", "a.txt", "lib"]);

    r.write({ ".ghostcommit.json": JSON.stringify({ nestedRepos: "capture" }) });
    const snap = r.ok("snapshot");
    expect(snap.excluded).toEqual([]);
    expect((await filesOf(r, snap.id)).sort()).toEqual([
      ".ghostcommit.json",
      ".gitmodules",
      "a.txt",
      "lib/lib.c",
      "tools/.gitignore",
      "tools/run.sh",
    ]);
    const gitDirs = [gitDirDigest(r), gitDirDigest(new Repo(sandbox, r.path("tools")))];
    r.write({
      "lib/lib.c": "agent\n",
      "lib/new.c": "new\n",
      "tools/run.sh": "agent\n",
      "tools/out/cache": "c2\n",
    });
    const report = r.ok("restore", snap.id);
    expect(report.written.sort()).toEqual(["lib/lib.c", "tools/run.sh"]);
    expect(report.deleted).toEqual(["lib/new.c"]);
    expect([r.read("lib/lib.c"), r.read("tools/run.sh"), r.read("tools/out/cache")]).toEqual([
      "v1\n",
      "run\n",
      "c2\n",
    ]);
    expect([gitDirDigest(r), gitDirDigest(new Repo(sandbox, r.path("tools")))]).toEqual(gitDirs);

    // Back to the snapshot that did not look into them: nothing inside them is proven absent.
    r.write({ "lib/new.c": "new again\n" });
    const old = r.ok("restore", before.id);
    expect(old.deleted).toEqual([".ghostcommit.json"]);
    expect([r.read("lib/new.c"), r.read("tools/run.sh")]).toEqual(["new again\n", "run\n"]);
  });

  // Found in a trial: with its submodule checked out at another commit than the superproject
  // records (an agent's commit inside it, a `git checkout` there), the snapshot held the gitlink
  // in place of the submodule's files: edits inside it went unseen and a restore left them.
  it("with nestedRepos: capture, capture a submodule's files also at another commit than recorded", async () => {
    const lib = repo({ "lib.c": "v1\n" });
    lib.write({ "lib.c": "v2\n" });
    lib.git("commit", "-qam", "v2");
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "lib");
    r.write({ ".ghostcommit.json": JSON.stringify({ nestedRepos: "capture" }) });
    sandbox.git(r.path("lib"), "checkout", "-q", "HEAD~1");
    r.write({ "lib/new.c": "new\n" });
    const snap = r.ok("snapshot");
    const files = (await filesOf(r, snap.id)).sort();
    expect(files).toEqual([".ghostcommit.json", ".gitmodules", "a.txt", "lib/lib.c", "lib/new.c"]);
    expect(snap.fileCount).toBe(files.length);
    r.write({ "lib/lib.c": "agent\n", "lib/later.c": "later\n" });
    r.remove("lib/new.c");
    expect(r.ok("diff", snap.id, "--name-status").map((e: any) => [e.status, e.path])).toEqual([
      ["added", "lib/later.c"],
      ["modified", "lib/lib.c"],
      ["deleted", "lib/new.c"],
    ]);
    const report = r.ok("restore", snap.id);
    expect([report.written.sort(), report.deleted, report.skipped]).toEqual([
      ["lib/lib.c", "lib/new.c"],
      ["lib/later.c"],
      [],
    ]);
    expect([r.read("lib/lib.c"), r.read("lib/new.c"), r.exists("lib/later.c")]).toEqual([
      "v1\n",
      "new\n",
      false,
    ]);
  });
});
