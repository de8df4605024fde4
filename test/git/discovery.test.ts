import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateWorkspace } from "../../src/git/repository.js";
import { Sandbox } from "../helpers/repo.js";
import { treeDigest } from "../helpers/support.js";

/**
 * Finding the repository from its files (no git process) must agree with `git rev-parse` in
 * every shape a workspace takes; where it cannot be sure it asks git, so the answers match.
 */
const sb = new Sandbox();
const saved = { ...process.env };
beforeAll(() => sb.applyToProcess());
afterAll(() => {
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, saved);
  sb.cleanup();
});

/** Both ways' answers (a location, or the error code). */
async function bothWays(cwd: string) {
  const answer = (viaGit: boolean) =>
    locateWorkspace(cwd, viaGit).then(
      (location) => location,
      (error) => ({ error: (error as { code?: string }).code }),
    );
  return { fromFiles: await answer(false), fromGit: await answer(true) };
}

/** Whether a CLI command in `cwd` ran `git rev-parse` (its trace names every git process). */
function ranRevParse(cwd: string): boolean {
  const run = sb.cli(cwd, ["list", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).toContain("ghostcommit-trace");
  return run.stderr.includes("git rev-parse");
}

describe("finding the repository without git", () => {
  const repo = sb.repo("repo", { "sub/deep ünï/f.txt": "f\n" }).dir;

  it("agrees with git rev-parse at the root, in a subdirectory and through a symlink", async () => {
    symlinkSync(path.join(repo, "sub"), path.join(sb.home, "link-to-sub"));
    for (const cwd of [repo, path.join(repo, "sub", "deep ünï"), path.join(sb.home, "link-to-sub")]) {
      const { fromFiles, fromGit } = await bothWays(cwd);
      expect(fromFiles).toEqual(fromGit);
      expect(fromFiles).toMatchObject({ kind: "git", worktreeRoot: repo });
    }
    const deep = await locateWorkspace(path.join(repo, "sub", "deep ünï"));
    expect(deep.prefix).toBe(Buffer.from("sub/deep ünï", "utf8").toString("latin1"));
  });

  it("leaves the unusual shapes to git and gets the same answer", async () => {
    // A linked worktree and a submodule (gitfiles), a broken .git directory git skips, a
    // core.worktree elsewhere, inside .git, no repository at all, a GIT_DIR (which ghostcommit
    // keeps from git) and a GIT_CEILING_DIRECTORIES (which it does not).
    const worktree = path.join(sb.home, "wt");
    sb.git(repo, "worktree", "add", "-q", "-b", "wt", worktree);
    const lib = sb.repo("lib").dir;
    const superRepo = sb.repo("super").dir;
    sb.git(superRepo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib");
    mkdirSync(path.join(repo, "sub", "broken", ".git"), { recursive: true });
    const moved = sb.repo("moved").dir;
    const movedTree = sb.dir("moved-tree");
    sb.git(moved, "config", "core.worktree", movedTree);
    const plain = sb.dir("plain/inner");
    const shapes = [
      worktree,
      path.join(superRepo, "lib"),
      path.join(repo, "sub", "broken"),
      movedTree,
      path.join(repo, ".git"),
      path.join(repo, ".git", "refs"),
      plain,
    ];
    for (const cwd of shapes) {
      const { fromFiles, fromGit } = await bothWays(cwd);
      expect(fromFiles, cwd).toEqual(fromGit);
    }
    expect((await bothWays(path.join(superRepo, "lib"))).fromFiles).toMatchObject({
      worktreeRoot: path.join(superRepo, "lib"),
    });
    const bare = path.join(sb.home, "bare.git");
    sb.git(sb.home, "init", "-q", "--bare", bare);
    const { fromFiles, fromGit } = await bothWays(bare);
    expect(fromFiles).toEqual(fromGit);
    for (const [name, value] of [
      ["GIT_DIR", path.join(lib, ".git")],
      ["GIT_CEILING_DIRECTORIES", repo],
    ]) {
      process.env[name] = value;
      try {
        const { fromFiles, fromGit } = await bothWays(path.join(repo, "sub"));
        expect(fromFiles, name).toEqual(fromGit);
      } finally {
        delete process.env[name];
      }
    }
  });

  it("refuses a SHA-256 repository with a clear error, found either way, and leaves it as it was", async () => {
    const dir = path.join(sb.home, "sha256");
    sb.git(sb.home, "init", "-q", "--object-format=sha256", dir);
    mkdirSync(path.join(dir, "src"));
    writeFileSync(path.join(dir, "src", "a.txt"), "a\n");
    sb.git(dir, "add", "-A");
    sb.git(dir, "commit", "-qm", "one");
    const gitDir = () => Object.fromEntries(treeDigest(path.join(dir, ".git")));
    const before = gitDir();
    expect(await bothWays(path.join(dir, "src"))).toEqual({
      fromFiles: { error: "not-a-workspace" },
      fromGit: { error: "not-a-workspace" },
    });
    const run = sb.cli(path.join(dir, "src"), ["snapshot", "--json"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("ghostcommit: ");
    expect(run.stderr).toContain("SHA-256 repository");
    expect(JSON.parse(run.stdout).error.code).toBe("not-a-workspace");
    expect(gitDir()).toEqual(before);
    expect(sb.git(dir, "status", "--porcelain")).toBe("");
  });

  // Found in a trial: a repository git refuses to open ("unknown repository extension found") was
  // snapshotted into the shadow store, and the repo store wrote objects into it before failing.
  it("refuses a repository using an extension git does not know, in both stores, writing nothing", async () => {
    const r = sb.repo("unknown-extension", { "a.txt": "a\n" });
    r.git("config", "extensions.preciousObjects", "true"); // known: still served
    r.git("config", "core.repositoryformatversion", "1");
    expect(sb.cli(r.dir, ["snapshot"]).status).toBe(0);
    r.git("config", "extensions.refStorage", "reftable");
    const before = Object.fromEntries(treeDigest(path.join(r.dir, ".git")));
    expect(await bothWays(r.dir)).toEqual({
      fromFiles: { error: "not-a-workspace" },
      fromGit: { error: "not-a-workspace" },
    });
    for (const store of ["shadow", "repo"]) {
      const run = sb.cli(r.dir, ["--store", store, "snapshot", "--json"]);
      expect([run.status, JSON.parse(run.stdout).error.code]).toEqual([1, "not-a-workspace"]);
      // Found from the files, or by git (whose message names the extension on its next line).
      expect(run.stderr).toMatch(/uses extensions\.refStorage, which neither|extension found: refstorage\n/);
    }
    expect(Object.fromEntries(treeDigest(path.join(r.dir, ".git")))).toEqual(before);
  });

  it("refuses a bare repository and a .git directory given with -C: taken for plain directories, a restore deleted a bare repository's branches", () => {
    const work = sb.repo("with-remote", { "a.txt": "a\n" });
    const bare = path.join(sb.home, "shared.git");
    sb.git(sb.home, "init", "-q", "--bare", bare);
    work.git("push", "-q", bare, "main");
    const sep = path.join(sb.home, "sep.git");
    sb.git(sb.home, "init", "-q", `--separate-git-dir=${sep}`, path.join(sb.home, "sep-work"));
    // A bare repository with a linked work tree: run there.
    const linked = path.join(sb.home, "linked-work");
    sb.git(bare, "worktree", "add", "-q", linked, "main");
    const bareDigest = () => Object.fromEntries(treeDigest(bare));
    const before = bareDigest();
    const data = path.join(sb.home, "bare-data");
    const cases: [string, string][] = [
      [
        bare,
        `is in a bare repository (${bare}), which has no work tree to snapshot: run ghostcommit in one of its work trees (${linked})`,
      ],
      [path.join(bare, "refs"), `is in a bare repository (${bare})`],
      // Not bare: its work tree is elsewhere, not to be cloned (found in a trial).
      [
        sep,
        `is in a git directory (${sep}), which is no work tree to snapshot: run ghostcommit in its work tree`,
      ],
      [work.path(".git"), `is inside a .git directory: run ghostcommit in its work tree, ${work.dir}`],
      [work.path(".git/objects"), "is inside a .git directory"],
    ];
    for (const [dir, said] of cases) {
      for (const args of [["snapshot"], ["list"], ["restore", "0".repeat(40)]]) {
        const run = sb.cli(sb.home, ["-C", dir, ...args, "--json"], undefined, { GHOSTCOMMIT_HOME: data });
        expect([run.status, run.json?.error.code], dir).toEqual([1, "not-a-workspace"]);
        expect(run.stderr).toContain(said);
      }
    }
    expect(bareDigest()).toEqual(before);
    expect(sb.git(bare, "rev-parse", "main")).toBe(work.git("rev-parse", "main"));
    expect(readdirSync(sb.home)).not.toContain("bare-data");
  });

  it("takes a folder whose .git directory is empty for a plain directory, as git does, and leaves that .git alone", () => {
    const dir = sb.dir("empty-dot-git");
    mkdirSync(path.join(dir, ".git/notes"), { recursive: true });
    writeFileSync(path.join(dir, ".git/notes/keep.txt"), "mine\n");
    writeFileSync(path.join(dir, "a.txt"), "a\n");
    mkdirSync(path.join(dir, "sub"));
    const snap = sb.cli(path.join(dir, "sub"), ["-C", dir, "snapshot", "--json"]);
    expect(snap.status, snap.stderr).toBe(0);
    writeFileSync(path.join(dir, "a.txt"), "changed\n");
    const restore = sb.cli(dir, ["restore", snap.json.id, "--json"]);
    expect(restore.status, restore.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(path.join(dir, ".git/notes/keep.txt"), "utf8")).toBe("mine\n");
    // A .git with a repository's parts that git cannot read is still refused, not taken for plain.
    const broken = sb.dir("broken-dot-git");
    mkdirSync(path.join(broken, ".git/objects"), { recursive: true });
    const refused = sb.cli(broken, ["snapshot", "--json"]);
    expect([refused.status, refused.json?.error.code]).toEqual([1, "not-a-workspace"]);
    expect(refused.stderr).toContain("git cannot read the repository around");
  });

  // Needs root to give the repository to another user (uid 65534), as a checkout made by another
  // account, a mounted volume or a container's files are.
  it.skipIf(process.getuid?.() !== 0)(
    "says why git refuses a repository another user owns, and works once it is trusted",
    () => {
      const other = sb.repo("others", { "src/a.txt": "a\n" }).dir;
      spawnSync("chown", ["-R", "65534:65534", other]);
      const gitDir = () => Object.fromEntries(treeDigest(path.join(other, ".git")));
      const before = gitDir();
      const run = sb.cli(path.join(other, "src"), ["snapshot"]);
      expect(run.status).toBe(1);
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      // Git's reason, not only its advice (the line it prints last).
      expect(lines[0]).toMatch(/^ghostcommit: .*: detected dubious ownership in repository at/);
      expect(lines[0]).toContain(`safe.directory '${other}'`);
      expect(gitDir()).toEqual(before);
      sb.git(sb.home, "config", "--global", "--add", "safe.directory", other);
      const trusted = sb.cli(path.join(other, "src"), ["snapshot", "--json"]);
      expect(trusted.status, trusted.stderr).toBe(0);
      expect(trusted.json.changedPaths ?? trusted.json.id).toBeTruthy();
    },
  );

  it("runs no git process to find a usual repository or a plain directory, and asks git for a worktree", () => {
    expect(ranRevParse(path.join(repo, "sub"))).toBe(false);
    expect(ranRevParse(sb.dir("plain-only/inner"))).toBe(false);
    expect(ranRevParse(path.join(sb.home, "wt"))).toBe(true);
  });
});
