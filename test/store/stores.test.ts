import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, Repo } from "../helpers/repo.js";
import { fileSandbox, filesOf, gitDirDigest, workDigest } from "../helpers/support.js";
import { snapshotIn } from "../session/support.js";
import { listIn, doctorIn } from "../helpers/in-process.js";

const { sandbox, repo } = fileSandbox();

/** Makes the user's history forget everything after the first commit, as thoroughly as git allows. */
function forgetHistory(r: Repo): void {
  r.git("reset", "-q", "--hard", "HEAD~1");
  r.git("branch", "-D", "topic");
  r.git("reflog", "expire", "--expire=now", "--all");
  r.git("gc", "-q", "--prune=now");
}

function objectGone(r: Repo, oid: string): boolean {
  try {
    r.git("cat-file", "-e", oid);
    return false;
  } catch {
    return true;
  }
}

describe("shadow store borrowing the user's objects", () => {
  for (const packedFirst of [false, true]) {
    it(`restores byte-exact after reset --hard, branch deletion, reflog expiry and gc --prune=now (${packedFirst ? "packed" : "loose"} objects)`, async () => {
      const r = repo({ "a.txt": "first\n" });
      r.write({ "a.txt": "second\n", "feature.txt": `only in commit two ${packedFirst}\n` });
      r.git("add", "-A");
      r.git("commit", "-qm", "two");
      r.git("checkout", "-q", "-b", "topic");
      r.write({ "topic.txt": `only on topic ${packedFirst}\n` });
      r.git("add", "-A");
      r.git("commit", "-qm", "topic");
      if (packedFirst) r.git("gc", "-q");
      const onTopic = await snapshotIn(r, { message: "on topic" });
      r.git("checkout", "-q", "main");
      const onMain = await snapshotIn(r, { message: "clean tree at commit two" });
      const expectedMain = workDigest(r.dir);
      const featureBlob = r.git("rev-parse", "HEAD:feature.txt").trim();
      const topicBlob = r.git("rev-parse", "topic:topic.txt").trim();

      forgetHistory(r);
      expect(objectGone(r, featureBlob)).toBe(true);
      expect(objectGone(r, topicBlob)).toBe(true);

      r.ok("restore", onMain.id);
      expect(workDigest(r.dir)).toEqual(expectedMain);
      r.ok("restore", onTopic.id);
      expect(r.read("topic.txt")).toBe(`only on topic ${packedFirst}\n`);
      expect((await doctorIn(r)).ok).toBe(true);
    });
  }
});

describe("shadow store linking the user's new loose objects", () => {
  it("a new object in a fan-out directory the store already linked from is linked too, and survives gc --prune=now", async () => {
    const r = repo({ "a.txt": "first\n" });
    await snapshotIn(r, { message: "links the first commit's loose objects" });
    // A file whose blob lands in the fan-out directory of a blob linked above.
    const first = r.git("rev-parse", "HEAD:a.txt").trim();
    let content = "";
    for (let n = 0; ; n++) {
      content = `shares a directory ${n}\n`;
      r.write({ "b.txt": content });
      if (r.git("hash-object", "b.txt").trim().slice(0, 2) === first.slice(0, 2)) break;
    }
    r.git("add", "b.txt");
    r.git("commit", "-qm", "two");
    const blob = r.git("rev-parse", "HEAD:b.txt").trim();
    const snap = await snapshotIn(r, { message: "borrows b.txt's blob from the new commit" });
    r.git("reset", "-q", "--hard", "HEAD~1");
    r.git("reflog", "expire", "--expire=now", "--all");
    r.git("gc", "-q", "--prune=now");
    expect(objectGone(r, blob)).toBe(true);
    r.ok("restore", snap.id);
    expect(r.read("b.txt")).toBe(content);
    expect(r.read("a.txt")).toBe("first\n");
  });
});

describe("worktrees, sparse checkout and plain directories", () => {
  it("refuses, naming the work tree, a directory outside its repository's work tree (core.worktree)", () => {
    // A repository whose files live elsewhere: `git -C meta status` shows the work tree's changes.
    const r = repo({ "a.txt": "a\n" });
    const elsewhere = path.join(sandbox.home, `wt-of-${path.basename(r.dir)}`);
    r.git("config", "core.worktree", elsewhere);
    mkdirSync(elsewhere);
    r.git("reset", "-q", "--hard"); // the files now checked out there
    writeFileSync(path.join(elsewhere, "a.txt"), "edited\n");
    expect(r.git("status", "--porcelain")).toBe(" M a.txt\n");
    const refused = r.cli(["snapshot", "--json"]);
    expect(refused.status).toBe(1);
    expect(refused.json.error.code).toBe("not-a-workspace");
    expect(refused.stderr).toContain(
      `outside the work tree of the repository at ${r.path(".git")} (core.worktree: ${elsewhere})`,
    );
    expect(readFileSync(path.join(elsewhere, "a.txt"), "utf8")).toBe("edited\n");
  });

  it("keeps separate snapshots per git worktree", async () => {
    const r = repo({ "a.txt": "a\n" });
    const wtDir = path.join(sandbox.home, `wt-${path.basename(r.dir)}`);
    r.git("worktree", "add", "-q", "-b", "wt", wtDir);
    writeFileSync(path.join(wtDir, "a.txt"), "in worktree\n");
    const inWt = sandbox.ok(wtDir, "snapshot");
    r.write({ "a.txt": "in main\n" });
    const inMain = await snapshotIn(r);
    expect((await listIn(r)).map((s: any) => s.id)).toEqual([inMain.id]);
    expect(sandbox.ok(wtDir, "list").map((s: any) => s.id)).toEqual([inWt.id]);
    const foreign = r.cli(["restore", inWt.id, "--json"]);
    expect(foreign.status).toBe(1);
    expect(foreign.json.error.code).toBe("not-found");
    writeFileSync(path.join(wtDir, "a.txt"), "agent\n");
    sandbox.ok(wtDir, "restore", inWt.id);
    expect(readFileSync(path.join(wtDir, "a.txt"), "utf8")).toBe("in worktree\n");
    expect(r.read("a.txt")).toBe("in main\n");
  });

  it("sparse checkout: skip-worktree files are neither lost nor materialized", async () => {
    const r = repo({ "in/a.txt": "a\n", "out/b.txt": "b\n", "top.txt": "t\n" });
    r.git("sparse-checkout", "set", "in");
    expect(r.exists("out/b.txt")).toBe(false);
    const index = readFileSync(r.path(".git/index"));
    const snap = await snapshotIn(r);
    expect((await filesOf(r, snap.id)).sort()).toEqual(["in/a.txt", "out/b.txt", "top.txt"]);
    r.write({ "in/a.txt": "agent\n", "in/new.txt": "n" });
    const report = r.ok("restore", snap.id);
    expect(report.written).toEqual(["in/a.txt"]);
    expect(report.deleted).toEqual(["in/new.txt"]);
    expect(r.exists("out")).toBe(false);
    expect(readFileSync(r.path(".git/index")).equals(index)).toBe(true);
    // The agent writes outside the cone: git's own status calls it modified, and so is it kept.
    r.write({ "out/b.txt": "important\n" });
    const outside = await snapshotIn(r);
    r.write({ "out/b.txt": "garbage\n" });
    expect(r.ok("restore", outside.id).written).toEqual(["out/b.txt"]);
    expect(r.read("out/b.txt")).toBe("important\n");
    expect(readFileSync(r.path(".git/index")).equals(index)).toBe(true);
  });

  it("a partial clone's sparse checkout: blobs it never fetched are promised, not lost (doctor, gc, repair)", async () => {
    const origin = repo({ "in/a.txt": "a\n", "out/b.txt": "b\n" });
    origin.git("config", "uploadpack.allowFilter", "true");
    const cloneDir = path.join(sandbox.home, `partial-${path.basename(origin.dir)}`);
    execFileSync("git", ["clone", "-q", "--filter=blob:none", "--sparse", `file://${origin.dir}`, cloneDir], {
      env: sandbox.env,
    });
    const r = new Repo(sandbox, cloneDir);
    r.git("sparse-checkout", "set", "in");
    const outBlob = r.git("rev-parse", "HEAD:out/b.txt").trim();
    // The clone never fetched out/b.txt's blob, and the snapshot names it.
    const unfetched = () => r.git("rev-list", "--objects", "--missing=print", "HEAD").includes(`?${outBlob}`);
    expect(unfetched()).toBe(true);
    const first = await snapshotIn(r);
    r.write({ "in/a.txt": "agent\n" });
    const second = await snapshotIn(r);
    expect(r.cli(["doctor", "--json"]).json).toMatchObject({ ok: true, problems: [] });
    expect(r.ok("gc").kept).toEqual([second.id, first.id]);
    expect(r.ok("doctor", "--repair").problems).toEqual([]);
    expect((await listIn(r)).map((s: any) => s.id)).toEqual([second.id, first.id]);
    expect(r.ok("restore", first.id).written).toEqual(["in/a.txt"]);
    expect([r.read("in/a.txt"), r.exists("out")]).toEqual(["a\n", false]);
    // Nothing was fetched meanwhile: the blob is still the clone's promise.
    expect(unfetched()).toBe(true);
  });

  it("never enters a submodule: its gitlink is kept and its files are left alone", async () => {
    const lib = repo({ "lib.c": "int lib;\n" });
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "lib");
    r.write({ "lib/lib.c": "changed inside\n", "lib/new.c": "new inside\n" });
    const snap = await snapshotIn(r);
    expect((await filesOf(r, snap.id)).sort()).toEqual([".gitmodules", "a.txt", "lib"]);
    r.write({ "lib/lib.c": "changed again\n", "a.txt": "agent\n" });
    r.remove("lib/new.c");
    const report = r.ok("restore", snap.id);
    expect(report.written).toEqual(["a.txt"]);
    expect(r.read("lib/lib.c")).toBe("changed again\n");
    expect(r.exists("lib/new.c")).toBe(false);
  });

  it("plain directory: every file counts (a .gitignore there excludes nothing) and no .git appears", async () => {
    const dir = sandbox.dir("plain-dir");
    const write = (rel: string, content: string) => {
      const file = path.join(dir, rel);
      sandbox.dir(path.relative(sandbox.home, path.dirname(file)));
      writeFileSync(file, content);
    };
    write(".gitignore", "*.log\nsecret/\n");
    write("app.log", "log\n");
    write("secret/key", "k\n");
    write("src/main.py", "print(1)\n");
    write("node_modules/dep/i.js", "x");
    const snap = await snapshotIn({ sandbox: sandbox, dir });
    expect(snap.parent).toBeNull();
    expect(sandbox.ok(dir, "show", snap.id).files.sort()).toEqual([
      ".gitignore",
      "app.log",
      "secret/key",
      "src/main.py",
    ]);
    expect(snap.excluded.map((e: any) => [e.path, e.reason])).toEqual([["node_modules", "dependency-dir"]]);
    expect(existsSync(path.join(dir, ".git"))).toBe(false);
    write("app.log", "changed\n");
    write("src/new.py", "n\n");
    write("node_modules/dep/j.js", "y");
    const report = sandbox.ok(dir, "restore", snap.id);
    expect(report.written).toEqual(["app.log"]);
    expect(report.deleted).toEqual(["src/new.py"]);
    expect(readFileSync(path.join(dir, "node_modules/dep/j.js"), "utf8")).toBe("y");
    expect(readdirSync(dir).sort()).toEqual([".gitignore", "app.log", "node_modules", "secret", "src"]);
    // An include of the dependency directory captures it whole: no longer reported as left out.
    const included = sandbox.ok(dir, "snapshot", "--include", "node_modules");
    expect(included.excluded).toEqual([]);
    expect(sandbox.ok(dir, "show", included.id).files).toContain("node_modules/dep/j.js");
  });
});

describe("repo store", () => {
  it("is read before this workspace wrote anything: a fresh clone, or the main work tree after a linked one's snapshot", () => {
    const r = repo({ "a.txt": "a\n" });
    const wtDir = path.join(sandbox.home, `wt-repo-${path.basename(r.dir)}`);
    r.git("worktree", "add", "-q", "-b", "wt-repo", wtDir);
    for (const round of ["nothing yet", "after the linked work tree's snapshot"]) {
      // Before, every read said this workspace's data directory "no longer exists (deleted or moved?)".
      const listed = r.cli(["--store", "repo", "list"]);
      expect([round, listed.status, listed.stdout]).toEqual([
        round,
        0,
        `no snapshots of ${r.dir} yet; take one with \`ghostcommit snapshot\`\n`,
      ]);
      expect(r.cli(["--store", "repo", "show", "1234567", "--json"]).json.error.code).toBe("not-found");
      expect(r.ok("--store", "repo", "sessions")).toEqual([]);
      sandbox.ok(wtDir, "--store", "repo", "snapshot");
    }
    const taken = r.ok("--store", "repo", "snapshot");
    expect(r.ok("--store", "repo", "list").map((s: any) => s.id)).toEqual([taken.id]);
  });

  it("keeps snapshots under refs/ghostcommit/, invisible to git branch, status and log", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "u.txt": "untracked\n", "a.txt": "edited\n" });
    const branches = r.git("branch", "-a");
    const status = r.status();
    const log = r.git("log", "--oneline");
    const index = readFileSync(r.path(".git/index"));
    const snap = r.ok("--store", "repo", "snapshot");
    const refs = r.git("for-each-ref", "--format=%(refname) %(objectname)").trim().split("\n");
    const ours = refs.filter((line) => line.startsWith("refs/ghostcommit/"));
    expect(ours).toHaveLength(1);
    expect(ours[0].endsWith(` ${snap.id}`)).toBe(true);
    expect(r.git("cat-file", "-t", snap.id).trim()).toBe("commit");
    expect(r.git("branch", "-a")).toBe(branches);
    expect(r.status()).toBe(status);
    expect(r.git("log", "--oneline")).toBe(log);
    expect(readFileSync(r.path(".git/index")).equals(index)).toBe(true);
    expect(await listIn(r)).toEqual([]); // the shadow store is a different store
    r.write({ "a.txt": "agent\n" });
    r.remove("u.txt");
    r.ok("--store", "repo", "restore", snap.id);
    expect(r.read("a.txt")).toBe("edited\n");
    expect(r.read("u.txt")).toBe("untracked\n");
    expect(r.ok("list", "--store", "repo").map((s: any) => s.kind)).toEqual(["safety", "snapshot"]);
  });
  it("stays whole when the user's gc prunes a dropped snapshot's objects, and beside the shadow store", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "u.txt": `untracked ${r.dir}\n` });
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(r.path("u.txt"), hourAgo, hourAgo); // old enough for ghostcommit's stat cache
    await snapshotIn(r); // shadow store: the blob lands there, and in the cache
    const first = r.ok("--store", "repo", "snapshot").id;
    r.git("fsck", "--connectivity-only", "--no-dangling"); // the repo-store commit's blob is in the user's repo
    r.ok("--store", "repo", "drop", first);
    r.git("gc", "-q", "--prune=now");
    const second = r.ok("--store", "repo", "snapshot").id;
    r.git("fsck", "--connectivity-only", "--no-dangling");
    r.write({ "u.txt": "changed\n" });
    r.ok("--store", "repo", "restore", second);
    expect(r.read("u.txt")).toBe(`untracked ${r.dir}\n`);
  });
});

describe("repo store objects in a repository others use", () => {
  /** Every directory and file below .git/objects, with its mode and owner. */
  const objectEntries = (r: Repo) =>
    readdirSync(r.path(".git/objects"), { recursive: true, encoding: "utf8" }).map((rel) => {
      const stat = statSync(r.path(`.git/objects/${rel}`));
      return { rel, dir: stat.isDirectory(), mode: stat.mode & 0o7777, uid: stat.uid };
    });

  // Found in a trial: fan-out directories made drwx------ under umask 077 (drwxr-sr-x under 022)
  // in a repository made with `git init --shared=group`, so the group's git could not add objects.
  it("makes them as a shared repository has them (core.sharedRepository), whatever the umask", () => {
    const r = repo({ "a.txt": "a\n" });
    r.git("config", "core.sharedRepository", "group");
    chmodSync(r.path(".git/objects"), 0o2775); // as `git init --shared=group` leaves it
    const before = new Set(objectEntries(r).map((e) => e.rel));
    r.write(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `file ${i}\n`])));
    const snapshot = spawnSync(
      "/bin/sh",
      ["-c", 'umask 077; exec "$0" "$@"', process.execPath, CLI, "--store", "repo", "snapshot"],
      {
        cwd: r.dir,
        env: sandbox.env,
        encoding: "utf8",
      },
    );
    expect(snapshot.status, snapshot.stderr).toBe(0);
    const made = objectEntries(r).filter((e) => !before.has(e.rel) && !e.rel.startsWith("pack"));
    expect(made.filter((e) => e.dir).length).toBeGreaterThan(10);
    for (const e of made) expect([e.rel, e.mode]).toEqual([e.rel, e.dir ? 0o2775 : 0o444]);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "gives what root makes in another user's repository to that user",
    () => {
      const r = repo({ "a.txt": "a\n" });
      r.write(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `file ${i}\n`])));
      r.git("config", "--global", "safe.directory", r.dir);
      execFileSync("chown", ["-R", "65534:65534", r.dir]);
      r.ok("--store", "repo", "snapshot");
      const root = objectEntries(r).filter((e) => e.uid !== 65534);
      expect(root).toEqual([]);
    },
  );
});

describe("repo store beside the user's git gc --prune=now", () => {
  // git-gc(1): "When git gc is run concurrently with another process, there is a risk of it
  // deleting an object that the other process is using but hasn't created a reference to." A
  // snapshot runs behind the user's back, so it must not leave a ref naming pruned objects (every
  // later `git gc` of theirs then fails: "fatal: bad object refs/ghostcommit/..."). A git on PATH
  // runs a real prune at the worst moment, once: just before the snapshot's ref is written, or
  // with its walk of the refs before and its deletions after.
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  function pruningGit(when: "before" | "after"): string {
    const bin = path.join(sandbox.home, `pruning-git-${when}`);
    mkdirSync(bin, { recursive: true });
    const prune =
      when === "before"
        ? `"${realGit}" prune --expire=now`
        : // The walk (a dry run lists what it would delete), the ref, then the deletions.
          `doomed=$("${realGit}" prune --dry-run --expire=now | cut -d' ' -f1)
  "${realGit}" "$@"; status=$?
  for oid in $doomed; do rm -f "$GIT_DIR/objects/$(echo $oid | cut -c1-2)/$(echo $oid | cut -c3-)"; done
  exit $status`;
    writeFileSync(
      path.join(bin, "git"),
      `#!/bin/sh
case " $* " in
*" update-ref --stdin -z "*)
  if [ ! -e "${bin}/done" ]; then
  touch "${bin}/done"
  ${prune}
  fi;;
esac
exec "${realGit}" "$@"
`,
      { mode: 0o755 },
    );
    return bin;
  }

  for (const when of ["before", "after"] as const) {
    it(`takes the snapshot again when a prune removes its new objects ${when} its ref is written`, () => {
      const r = repo({ "a.txt": "a\n", "src/b.txt": "b\n" });
      r.write({ "a.txt": `agent ${when}\n`, "src/new.txt": `untracked ${when}\n`, "u.txt": "u\n" });
      const bin = pruningGit(when);
      const env = { PATH: `${bin}:${process.env.PATH}` };
      const result = sandbox.cli(r.dir, ["--store", "repo", "snapshot", "--json"], undefined, env);
      expect(existsSync(path.join(bin, "done"))).toBe(true); // the prune ran
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      const snap = result.json;
      // The user's git works on: no ref names a missing object.
      r.git("for-each-ref");
      r.git("fsck", "--connectivity-only", "--no-dangling");
      const ours = r.git("for-each-ref", "--format=%(objectname)", "refs/ghostcommit/").trim().split("\n");
      expect(ours).toEqual([snap.id]);
      r.git("gc", "-q", "--prune=now");
      r.write({ "a.txt": "later\n", "src/new.txt": "later\n" });
      r.remove("u.txt");
      r.ok("--store", "repo", "restore", snap.id);
      expect(r.read("a.txt")).toBe(`agent ${when}\n`);
      expect(r.read("src/new.txt")).toBe(`untracked ${when}\n`);
      expect(r.read("u.txt")).toBe("u\n");
    });
  }
});

describe("finding a snapshot by its full id", () => {
  it("finds it whether its ref and commit are loose or packed, and never one that was dropped", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "a.txt": "one\n" });
    const kept = await snapshotIn(r, {}, "repo");
    r.write({ "a.txt": "two\n" });
    const dropped = await snapshotIn(r, {}, "repo");
    const shown = (id: string) => r.cli(["--store", "repo", "show", id, "--json"]);
    expect(shown(kept.id).json).toMatchObject({ id: kept.id, files: ["a.txt"] });
    r.ok("--store", "repo", "drop", dropped.id);
    expect(r.git("cat-file", "-t", dropped.id).trim()).toBe("commit"); // its object is still there
    for (const id of [dropped.id, dropped.id.slice(0, 12)]) {
      const missing = shown(id);
      expect(missing.status).toBe(1);
      expect(missing.json.error.code).toBe("not-found");
    }
    r.git("pack-refs", "--all");
    expect(
      existsSync(r.path(`.git/${r.git("for-each-ref", "--format=%(refname)", "refs/ghostcommit/").trim()}`)),
    ).toBe(false);
    expect(shown(kept.id).json.id).toBe(kept.id);
    r.git("gc", "-q");
    expect(existsSync(r.path(`.git/objects/${kept.id.slice(0, 2)}/${kept.id.slice(2)}`))).toBe(false);
    expect(shown(kept.id).json).toMatchObject({ id: kept.id, message: kept.message ?? "snapshot" });
    r.write({ "a.txt": "three\n" });
    r.ok("--store", "repo", "restore", kept.id);
    expect(r.read("a.txt")).toBe("one\n");
  });
});

// Where snapshots are the setting of a doctor, gc, show or drop, they are taken in-process.
describe("doctor and gc", () => {
  it("doctor is ok on a healthy store and exits 1 when a snapshot's object is missing", async () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "unique.txt": `content only the store has ${r.dir}\n` });
    const snap = await snapshotIn(r);
    const healthy = r.cli(["doctor", "--json"]);
    expect(healthy.status).toBe(0);
    expect(healthy.json.ok).toBe(true);
    const blob = r.git("hash-object", "unique.txt").trim();
    const objectFile = path.join(healthy.json.store, "git", "objects", blob.slice(0, 2), blob.slice(2));
    expect(existsSync(objectFile)).toBe(true);
    unlinkSync(objectFile);
    const damaged = r.cli(["doctor", "--json"]);
    expect(damaged.status).toBe(1);
    expect(damaged.json.ok).toBe(false);
    expect(damaged.json.problems.length).toBeGreaterThan(0);
    expect(r.cli(["doctor"]).status).toBe(1);
    // The damaged snapshot is not restored half-way.
    r.write({ "unique.txt": "now\n", "a.txt": "changed\n" });
    const restore = r.cli(["restore", snap.id, "--json"]);
    expect(restore.status).toBe(1);
    expect(r.read("a.txt")).toBe("changed\n");
  });

  it("in the repo store, doctor names a snapshot whose commit the user's prune removed, and --repair lets their gc run again", async () => {
    const r = repo({ "a.txt": "a\n" });
    const kept = (await snapshotIn(r, {}, "repo")).id;
    r.write({ "u.txt": "only this snapshot\n" });
    const lost = (await snapshotIn(r, {}, "repo")).id;
    // What a prune beside an older ghostcommit left: the ref, not its commit.
    unlinkSync(r.path(`.git/objects/${lost.slice(0, 2)}/${lost.slice(2)}`));
    expect(() => r.git("gc", "-q")).toThrow(/bad object refs\/ghostcommit\//);
    const damaged = r.cli(["--store", "repo", "doctor", "--json"]);
    expect(damaged.stderr).toBe("");
    expect(damaged.status).toBe(1);
    expect(damaged.json.problems.map((p: any) => p.code)).toEqual(["bad-snapshot"]);
    expect(damaged.json.problems[0].message).toContain(lost);
    expect(damaged.json.problems[0].message).toContain("doctor --repair");
    const repaired = r.ok("--store", "repo", "doctor", "--repair");
    expect(repaired.repaired.map((p: any) => p.message)).toEqual([
      `dropped snapshot ${lost}: its commit cannot be read`,
    ]);
    r.git("gc", "-q");
    expect(r.ok("--store", "repo", "list").map((s: any) => s.id)).toEqual([kept]);
  });

  it("gc --keep N keeps the newest N, --older-than expires by age, both report bytes", async () => {
    const r = repo({ "a.txt": "a\n" });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      r.write({ "a.txt": `${i}\n` });
      ids.push((await snapshotIn(r, { message: `s${i}` })).id);
    }
    const kept = r.ok("gc", "--keep", "2");
    expect(kept.dropped.sort()).toEqual([ids[0], ids[1]].sort());
    expect(kept.kept).toEqual([ids[3], ids[2]]);
    expect(typeof kept.bytesBefore).toBe("number");
    expect(typeof kept.bytesAfter).toBe("number");
    expect((await listIn(r)).map((s: any) => s.id)).toEqual([ids[3], ids[2]]);
    expect(r.ok("gc", "--older-than", "1h").dropped).toEqual([]);
    const all = r.ok("gc", "--older-than", "0s");
    expect(all.dropped.sort()).toEqual([ids[2], ids[3]].sort());
    expect(await listIn(r)).toEqual([]);
    expect((await doctorIn(r)).ok).toBe(true);
  });

  it("gc never expires the safety snapshot of the latest restore, and the store stays consistent", async () => {
    const r = repo({ "a.txt": "a\n" });
    const first = (await snapshotIn(r)).id;
    r.write({ "a.txt": "b\n" });
    const report = r.ok("restore", first);
    const gc = r.ok("gc", "--keep", "0");
    expect(gc.kept).toEqual([report.safety]);
    r.ok("restore", report.safety);
    expect(r.read("a.txt")).toBe("b\n");
  });

  it("the shadow store leaves the user's .git byte-identical through gc and drop", async () => {
    const r = repo({ "a.txt": "a\n" });
    const before = gitDirDigest(r);
    r.write({ "u.txt": "one\n" });
    const one = (await snapshotIn(r)).id;
    r.write({ "u.txt": "two\n" });
    await snapshotIn(r);
    expect(r.ok("drop", one.slice(0, 7)).dropped).toEqual([one]);
    r.ok("gc");
    expect(await listIn(r)).toHaveLength(1);
    expect(gitDirDigest(r)).toEqual(before);
  });
});

describe("a data directory inside the workspace", () => {
  it.each(["a repository", "a plain directory"])(
    "is never captured in %s, so a restore of an older snapshot leaves the store whole",
    (kind) => {
      const r = repo({ "a.txt": "a\n" });
      if (kind === "a plain directory") rmSync(r.path(".git"), { recursive: true });
      // A store set inside a project (or an agent started in ~, where ~/.local/share/ghostcommit is).
      const home = { GHOSTCOMMIT_HOME: r.path("gc-data") };
      const run = (...args: string[]) => {
        const result = sandbox.cli(r.dir, [...args, "--json"], undefined, home);
        expect(result.status, result.stderr).toBe(0);
        return result.json;
      };
      const one = run("snapshot", "-m", "one");
      expect(one.excluded).toEqual([expect.objectContaining({ path: "gc-data", reason: "store" })]);
      r.write({ "work.txt": "important\n" });
      const two = run("snapshot", "-m", "two");
      expect(run("show", two.id).files.sort()).toEqual(["a.txt", "work.txt"]);
      const restored = run("restore", one.id);
      expect(restored.deleted).toEqual(["work.txt"]);
      expect(run("list").map((s: { id: string }) => s.id)).toEqual([restored.safety, two.id, one.id]);
      expect(run("doctor").ok).toBe(true);
      run("restore", restored.safety);
      expect(r.read("work.txt")).toBe("important\n");
    },
  );
  it("is never captured when its name starts with two dots (`..gc-data` is inside, not above)", () => {
    const r = repo({ "a.txt": "a\n" });
    const home = { GHOSTCOMMIT_HOME: r.path("..gc-data") };
    const run = (...args: string[]) => {
      const result = sandbox.cli(r.dir, [...args, "--json"], undefined, home);
      expect(result.status, result.stderr).toBe(0);
      return result.json;
    };
    run("snapshot", "-m", "one");
    const two = run("snapshot", "-m", "two");
    expect(two.excluded).toEqual([expect.objectContaining({ path: "..gc-data", reason: "store" })]);
    expect(run("show", two.id).files).toEqual(["a.txt"]);
  });
});
