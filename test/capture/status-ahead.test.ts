import {
  chmodSync,
  cpSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Repo } from "../helpers/repo.js";
import { fileSandbox, filesOf } from "../helpers/support.js";

// A later snapshot's status is started by the command-line loader, before the bundle loads, from
// the plan the last snapshot from the same directory left; the capture takes it only when it is
// exactly the status it would start itself. These tests watch which happened through the trace
// and check that every snapshot holds what is on disk either way.
const { sandbox, repo: makeRepo } = fileSandbox();

/**
 * What became of the status started ahead, from the trace. One discarded only for its age was the
 * status the capture wanted: a machine under load took over a second to load the bundle, which
 * these tests are not about.
 */
function aheadSteps(trace: string): string[] {
  return trace
    .split("\n")
    .filter((line) => line.includes("status ahead:"))
    .map((line) => line.replace(/^.*status ahead: /, ""))
    .map((step) => (step === "discarded (started too long ago)" ? "adopted" : step));
}

function snapshot(repo: Repo, cwd = repo.dir, env: NodeJS.ProcessEnv = {}, args = ["snapshot"]) {
  const result = sandbox.cli(cwd, [...args, "--json"], undefined, { GHOSTCOMMIT_TRACE: "1", ...env });
  expect(result.status, result.stderr).toBe(0);
  return {
    id: JSON.parse(result.stdout).id as string,
    ahead: aheadSteps(result.stderr),
    trace: result.stderr,
  };
}

/** The content of `rel` in snapshot `id`, read back by restoring it into the work tree. */
function contentAt(repo: Repo, id: string, rel: string, cwd = repo.dir): string {
  const restored = sandbox.cli(cwd, ["restore", id, "--json"]);
  expect(restored.status, restored.stderr).toBe(0);
  return repo.read(rel);
}

function storeTmp(): string[] {
  const workspaces = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
  return readdirSync(workspaces).flatMap((ws) => readdirSync(path.join(workspaces, ws, "tmp")));
}

/** The store directory of the workspace at `dir`. */
function storeOf(dir: string): string {
  const workspaces = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
  const [store] = readdirSync(workspaces).filter((ws) =>
    readFileSync(path.join(workspaces, ws, "workspace.json"), "utf8").includes(JSON.stringify(dir)),
  );
  return path.join(workspaces, store);
}

function planFiles(): string[] {
  const cache = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "cache");
  return readdirSync(cache)
    .filter((name) => name.startsWith("status-"))
    .map((name) => path.join(cache, name));
}

describe("status started ahead of the bundle", () => {
  it("a later snapshot takes it, and holds every edit, new file and deletion made since the last one", async () => {
    const repo = makeRepo({ "src/a.ts": "a1\n", "src/b.ts": "b1\n", "README.md": "readme\n" });
    expect(snapshot(repo).ahead).toEqual([]); // no plan yet
    snapshot(repo); // the private index copy's first write: nothing started ahead of a status that writes
    repo.write({ "src/a.ts": "a2\n", "notes/new.txt": "new\n" });
    repo.remove("src/b.ts");
    const later = snapshot(repo);
    expect(later.ahead).toEqual(["started", "adopted"]);
    expect(await filesOf(repo, later.id)).toEqual(["README.md", "notes/new.txt", "src/a.ts"]);
    repo.write({ "src/a.ts": "a3\n" });
    const again = snapshot(repo);
    expect(again.ahead).toEqual(["started", "adopted"]);
    expect(contentAt(repo, later.id, "src/a.ts")).toBe("a2\n");
    expect(contentAt(repo, again.id, "src/a.ts")).toBe("a3\n");
    expect(storeTmp()).toEqual([]); // its git directory was removed with the capture's

    // While a restore holds its lock it may be writing files: nothing is started ahead then.
    const lock = path.join(storeOf(repo.dir), "restore.ghostlock");
    writeFileSync(
      lock,
      JSON.stringify({ pid: process.pid, host: os.hostname(), token: "t", since: Date.now() }),
    );
    repo.write({ "src/a.ts": "a4\n" });
    const duringRestore = snapshot(repo);
    rmSync(lock);
    expect(duringRestore.ahead).toEqual([]);
    expect(contentAt(repo, duringRestore.id, "src/a.ts")).toBe("a4\n");
  });

  it("a restore's safety snapshot takes it too, and holds the edits the restore replaces", () => {
    const repo = makeRepo({ "lib.ts": "l1\n" });
    const target = snapshot(repo).id;
    snapshot(repo);
    repo.write({ "lib.ts": "unsaved work\n", "draft.md": "draft\n" });
    const restored = sandbox.cli(repo.dir, ["restore", target, "--json"], undefined, {
      GHOSTCOMMIT_TRACE: "1",
    });
    expect(restored.status, restored.stderr).toBe(0);
    expect(aheadSteps(restored.stderr)).toContain("adopted");
    expect(repo.read("lib.ts")).toBe("l1\n");
    expect(repo.exists("draft.md")).toBe(false);
    const back = repo.cli(["restore", JSON.parse(restored.stdout).safety, "--json"]);
    expect(back.status, back.stderr).toBe(0);
    expect(repo.read("lib.ts")).toBe("unsaved work\n");
    expect(repo.read("draft.md")).toBe("draft\n");
  });

  it("an agent's turn through the command line takes it for both its snapshots, and records what the turn changed", async () => {
    const repo = makeRepo({ "src/app.ts": "v1\n", "README.md": "readme\n" });
    snapshot(repo);
    snapshot(repo); // the plan for this directory, with the private index copy written
    const turn = (step: "begin" | "end") => {
      const result = sandbox.cli(
        repo.dir,
        ["turn", step, "--session", "s", "--turn", "1", "--json"],
        undefined,
        {
          GHOSTCOMMIT_TRACE: "1",
        },
      );
      expect(result.status, result.stderr).toBe(0);
      return { json: JSON.parse(result.stdout), adopted: aheadSteps(result.stderr).includes("adopted") };
    };
    repo.write({ "src/app.ts": "edited before the turn\n" });
    const begun = turn("begin");
    repo.write({ "src/app.ts": "v2\n", "src/new.ts": "new\n" });
    repo.remove("README.md");
    const ended = turn("end");
    expect([begun.adopted, ended.adopted]).toEqual([true, true]);
    expect([...ended.json.changed].sort()).toEqual(["README.md", "src/app.ts", "src/new.ts"]);
    expect(await filesOf(repo, ended.json.after)).toEqual(["src/app.ts", "src/new.ts"]);
    expect(contentAt(repo, begun.json.before, "src/app.ts")).toBe("edited before the turn\n");
  });

  it("is dropped when HEAD moved, the user's index changed or info/exclude changed, and the snapshot is right", async () => {
    const repo = makeRepo({ "app.js": "v1\n" });
    snapshot(repo);
    snapshot(repo);
    // A commit since, made without touching the index: the status started ahead compared
    // against the old HEAD.
    const commit = repo.git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "empty").trim();
    repo.git("update-ref", "HEAD", commit);
    const afterCommit = snapshot(repo);
    expect(repo.ok("show", afterCommit.id).parent).toBe(repo.git("rev-parse", "HEAD").trim());
    expect(afterCommit.ahead).toEqual(["started", "discarded (HEAD moved)"]);

    snapshot(repo); // the copy, made again for the new index, is written once
    // A file staged since: the private index copy is to be made again, so none is started.
    repo.write({ "staged.txt": "s\n" });
    repo.git("add", "staged.txt");
    const afterAdd = snapshot(repo);
    expect(await filesOf(repo, afterAdd.id)).toEqual(["app.js", "staged.txt"]);
    expect(afterAdd.ahead).toEqual([]);

    snapshot(repo);
    // The status started ahead listed secret.txt; the repository's exclude file now hides it.
    repo.write({ "secret.txt": "token\n" });
    snapshot(repo);
    writeFileSync(repo.path(".git/info/exclude"), "secret.txt\n");
    const afterExclude = snapshot(repo);
    expect(await filesOf(repo, afterExclude.id)).toEqual(["app.js", "staged.txt"]);
    expect(afterExclude.ahead).toEqual(["started", "discarded (info/exclude changed)"]);
    expect(storeTmp()).toEqual([]);
  });

  it("each directory has its own plan; a plan others may write is never run; it can be turned off", () => {
    const others = planFiles();
    const repo = makeRepo({ "src/main.ts": "m1\n", "top.txt": "t\n" });
    const src = repo.path("src");
    snapshot(repo, src);
    snapshot(repo, src);
    repo.write({ "src/main.ts": "m2\n" });
    const fromSrc = snapshot(repo, src);
    expect(fromSrc.ahead).toEqual(["started", "adopted"]);
    expect(contentAt(repo, fromSrc.id, "src/main.ts", src)).toBe("m2\n");

    const mine = planFiles().filter((file) => !others.includes(file));
    expect(mine).toHaveLength(1);
    chmodSync(mine[0], 0o666);
    repo.write({ "src/main.ts": "m3\n" });
    const untrusted = snapshot(repo, src);
    expect(untrusted.ahead).toEqual([]);
    expect(contentAt(repo, untrusted.id, "src/main.ts", src)).toBe("m3\n");

    const off = snapshot(repo, src, { GHOSTCOMMIT_NO_STATUS_AHEAD: "1" });
    expect(off.ahead).toEqual([]);
    // The plan names a program's arguments: a file others may write is replaced, never run.
    expect(statSync(mine[0]).mode & 0o077).toBe(0);
  });

  it("is started for the directory -C names, before or after the command, from anywhere", () => {
    const repo = makeRepo({ "pkg/index.js": "i1\n", "top.txt": "t\n" });
    const elsewhere = sandbox.dir("elsewhere");
    const viaC = (args: string[]) => snapshot(repo, elsewhere, {}, args);
    viaC(["-C", repo.path("pkg"), "snapshot"]);
    viaC(["-C", repo.path("pkg"), "snapshot"]);
    repo.write({ "pkg/index.js": "i2\n", "pkg/new.js": "n\n" });
    const before = viaC(["-C", repo.path("pkg"), "snapshot"]);
    expect(before.ahead).toEqual(["started", "adopted"]);
    const pkg = repo.path("pkg"); // the workspace: the directory -C names
    expect(sandbox.ok(pkg, "show", before.id).files).toEqual(["index.js", "new.js"]);
    // The same directory named relative to the repository, after the command: the same plan.
    repo.write({ "pkg/index.js": "i3\n" });
    const after = snapshot(repo, repo.dir, {}, ["snapshot", "-Cpkg"]);
    expect(after.ahead).toEqual(["started", "adopted"]);
    expect(contentAt(repo, after.id, "pkg/index.js", pkg)).toBe("i3\n");
    // Another store than the workspace's own: none is started (its plan would be another's).
    repo.write({ "pkg/index.js": "i4\n" });
    const store = snapshot(repo, pkg, {}, ["snapshot", "--store", "shadow"]);
    expect(store.ahead).toEqual([]);
    expect(contentAt(repo, store.id, "pkg/index.js", pkg)).toBe("i4\n");
  });

  it("is not started from a plan copied with a used data directory's cache: it names that one's store", () => {
    const repo = makeRepo({ "a.txt": "a1\n" });
    snapshot(repo);
    snapshot(repo);
    repo.write({ "a.txt": "a2\n" });
    expect(snapshot(repo).ahead).toEqual(["started", "adopted"]);
    // A new data directory set up from the used one's cache (its code cache, and its plans).
    const home = sandbox.dir("copied-home");
    cpSync(path.join(sandbox.env.GHOSTCOMMIT_HOME!, "cache"), path.join(home, "cache"), { recursive: true });
    repo.write({ "a.txt": "a3\n" });
    const first = snapshot(repo, repo.dir, { GHOSTCOMMIT_HOME: home });
    expect(first.ahead).toEqual([]);
    repo.write({ "a.txt": "later\n" });
    const restored = sandbox.cli(repo.dir, ["restore", first.id, "--json"], undefined, {
      GHOSTCOMMIT_HOME: home,
    });
    expect(restored.status, restored.stderr).toBe(0);
    expect(repo.read("a.txt")).toBe("a3\n");
  });

  it("a plain directory's later snapshot takes it too, and a status started ahead never writes the store's index", async () => {
    const dir = new Repo(sandbox, sandbox.dir("plain-ahead"));
    dir.write({ "src/a.txt": "a1\n", "src/deep/b.txt": "b1\n", "notes.md": "n\n" });
    expect(snapshot(dir).ahead).toEqual([]); // the first snapshot lists everything, no status
    snapshot(dir); // the first status writes git's untracked cache into the store's index
    const index = path.join(storeOf(dir.dir), "plain-index");
    const written = statSync(index, { bigint: true });
    // A new directory inside a cached one, an edit and a deletion.
    dir.write({ "src/a.txt": "a2\n", "src/deep/new/c.txt": "c\n" });
    dir.remove("notes.md");
    const later = snapshot(dir);
    expect(later.ahead).toEqual(["started", "adopted"]);
    expect(later.trace).not.toContain("status asked again"); // git said no ignore file changed
    expect(await filesOf(dir, later.id)).toEqual(["src/a.txt", "src/deep/b.txt", "src/deep/new/c.txt"]);
    // The same directory turned into a file.
    dir.remove("src/deep/new");
    dir.write({ "src/deep/new": "now a file\n" });
    const kind = snapshot(dir);
    expect(kind.ahead).toEqual(["started", "adopted"]);
    expect(await filesOf(dir, kind.id)).toEqual(["src/a.txt", "src/deep/b.txt", "src/deep/new"]);
    const after = statSync(index, { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([written.ino, written.mtimeNs]);

    // More changes than a snapshot keeps over the index: the capture rewrites it, so the next
    // command starts nothing ahead (its status writes the cache), and the one after does again.
    dir.write(Object.fromEntries(Array.from({ length: 450 }, (_, n) => [`bulk/f${n}.txt`, `${n}\n`])));
    expect(snapshot(dir).ahead).toEqual(["started", "adopted"]);
    expect(statSync(index, { bigint: true }).mtimeNs).not.toBe(written.mtimeNs);
    dir.write({ "src/a.txt": "a3\n" });
    expect(snapshot(dir).ahead).toEqual([]);
    dir.write({ "src/a.txt": "a4\n", "bulk/f7.txt": "seven\n" });
    const back = snapshot(dir);
    expect(back.ahead).toEqual(["started", "adopted"]);
    expect(await filesOf(dir, back.id)).toHaveLength(453);
    expect(contentAt(dir, later.id, "src/a.txt")).toBe("a2\n");
    expect(contentAt(dir, kind.id, "src/deep/new")).toBe("now a file\n");
    expect(contentAt(dir, back.id, "bulk/f7.txt")).toBe("seven\n");
    expect(dir.read("src/a.txt")).toBe("a4\n");

    // A .gitignore hiding itself and all beside it, in a directory git's cache holds: a status
    // that does not write the cache still says an ignore file changed, and the capture asks again.
    // The restores above changed the files the index was written with: the next capture writes
    // the index again, and the one after it writes git's cache; the third starts status ahead.
    snapshot(dir);
    snapshot(dir);
    expect(snapshot(dir).ahead).toEqual(["started", "adopted"]);
    dir.write({ "src/.gitignore": "*\n", "src/hidden.txt": "h\n" });
    const hidden = snapshot(dir);
    expect(hidden.ahead).toEqual(["started", "adopted"]);
    expect(hidden.trace).toContain("capture: status asked again");
    expect(await filesOf(dir, hidden.id)).toEqual(
      expect.arrayContaining(["src/.gitignore", "src/hidden.txt"]),
    );
    expect(storeTmp()).toEqual([]);
  });

  it("keeps the plans of the 64 directories most recently captured from, whatever their number", () => {
    const cache = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "cache");
    const old = new Date(Date.now() - 86_400_000);
    for (let n = 0; n < 80; n++) {
      const file = path.join(cache, `status-${n.toString(16).padStart(16, "0")}.json`);
      writeFileSync(file, "{}", { mode: 0o600 });
      utimesSync(file, old, old);
    }
    const repo = makeRepo({ "x.txt": "x\n" });
    snapshot(repo);
    const plans = planFiles();
    expect(plans).toHaveLength(64);
    expect(plans.filter((file) => readFileSync(file, "utf8").includes(repo.dir))).toHaveLength(1);
  });
});
