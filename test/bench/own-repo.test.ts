import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

// `npm run bench -- --repo DIR` measures a copy of a real repository. Checks that it measures the
// copy with the working state it promises, and leaves the repository itself as it was; never how
// fast anything was.
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const temp = mkdtempSync(path.join(os.tmpdir(), "ghostcommit-bench-repo-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const gitEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "T",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "T",
  GIT_COMMITTER_EMAIL: "t@example.com",
};
const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync("git", args, { cwd, env: gitEnv, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
};

/** A repository shaped like real ones: a root .gitattributes, nested .gitignores, CRLF and binary files. */
function makeRepository(dir: string): void {
  git(temp, "init", "-q", "-b", "main", dir);
  writeFileSync(path.join(dir, ".gitattributes"), "* text=auto eol=lf\n*.png binary\n");
  writeFileSync(path.join(dir, ".gitignore"), "/dist/\n");
  for (let d = 0; d < 8; d++) {
    const sub = path.join(dir, "packages", `p${d}`, "src");
    mkdirSync(sub, { recursive: true });
    // Half the packages ignore every .txt file: no new file may land where it would be ignored.
    if (d % 2 === 0) writeFileSync(path.join(dir, "packages", `p${d}`, ".gitignore"), "*.txt\n");
    for (let f = 0; f < 12; f++) {
      const file = path.join(sub, `f${f}.ts`);
      writeFileSync(file, `export const v${f} = ${d};\n`.repeat(f + 1));
    }
    // Binary files sit among the text files: they are never edited.
    writeFileSync(path.join(sub, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  }
  writeFileSync(path.join(dir, "packages", "p1", "src", "windows.ts"), "a\r\nb\r\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "base");
}

describe("npm run bench -- --repo DIR", () => {
  it("refuses, in one line, a directory that is no repository or has no commit", () => {
    const plain = path.join(temp, "plain");
    mkdirSync(plain);
    const empty = path.join(temp, "empty");
    git(temp, "init", "-q", empty);
    for (const [dir, why] of [
      [plain, "not a git work tree"],
      [empty, "the repository has no commit to copy"],
    ]) {
      const r = spawnSync(
        process.execPath,
        ["bench/run.mjs", "--quick", "--repo", dir, "--trees", path.join(temp, "refused")],
        { cwd: root, encoding: "utf8", env: gitEnv },
      );
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(`bench: --repo ${dir}: ${why}`);
    }
  });

  it("measures a copy of the repository, edited as promised, and leaves the repository alone", {
    timeout: 120_000,
  }, async () => {
    const source = path.join(temp, "source");
    makeRepository(source);
    // The user's own uncommitted work stays theirs: the copy starts from HEAD.
    writeFileSync(path.join(source, "packages", "p0", "src", "f0.ts"), "my unsaved work\n");
    const headBefore = git(source, "rev-parse", "HEAD");
    const statusBefore = git(source, "status", "--porcelain", "-uall");
    const out = path.join(temp, "repo.json");
    const trees = path.join(temp, "trees");
    const { stdout } = await run(
      process.execPath,
      ["bench/run.mjs", "--quick", "--no-anchors", "--repo", source, "--out", out, "--trees", trees],
      { cwd: root, maxBuffer: 64 << 20 },
    );
    const report = JSON.parse(readFileSync(out, "utf8"));
    // Only the repository: no generated tree when --only does not name one.
    expect(report.trees).toHaveLength(1);
    const [tree] = report.trees;
    // A repository of its own is measured, not judged against the bars of the generated trees.
    expect(report.bars).toEqual([]);
    expect(stdout).toContain(
      "bars:\n  none judged: SPEC §7's bars are for the generated 100k and plain trees",
    );
    expect(tree.spec).toMatchObject({ kind: "git", source, files: 111, modified: 20, added: 10 });
    expect(stdout).toContain(`a copy of ${source} at ${headBefore.slice(0, 12)}: 111 tracked files`);
    const restore = tree.cases.find((c: { id: string }) => c.id === "restore");
    expect(restore).toMatchObject({ written: 20, maxWrongWrites: 0 });
    for (const c of tree.cases) expect(c.skipped, `${c.id}: ${c.skipped}`).toBeUndefined();

    // The copy: the 20 edited files are text files, and the 10 new ones are not ignored.
    const copy = path.join(trees, tree.spec.name, "work");
    const changes = git(copy, "status", "--porcelain", "-uall").trimEnd().split("\n");
    const edited = changes.filter((l) => l.startsWith(" M ")).map((l) => l.slice(3));
    const added = changes.filter((l) => l.startsWith("?? ")).map((l) => l.slice(3));
    expect(edited).toHaveLength(20);
    expect(added).toHaveLength(10);
    expect(changes).toHaveLength(30);
    expect(edited.filter((p) => p.endsWith(".png"))).toEqual([]);
    for (const p of added) expect(p).toMatch(/^(packages\/p[1357]\/src\/|[^/]+$)/);
    // Spread over the tree, as an agent's edits across a project are.
    const packagesOf = (paths: string[]) => new Set(paths.map((p) => p.split("/")[1]));
    expect(packagesOf(edited).size).toBe(8);
    expect(packagesOf(added).size).toBeGreaterThanOrEqual(4);
    expect(git(copy, "rev-parse", "HEAD")).toBe(headBefore);

    // The repository itself: same HEAD, same working state, and its own change kept.
    expect(git(source, "rev-parse", "HEAD")).toBe(headBefore);
    expect(git(source, "status", "--porcelain", "-uall")).toBe(statusBefore);
    expect(readFileSync(path.join(source, "packages", "p0", "src", "f0.ts"), "utf8")).toBe(
      "my unsaved work\n",
    );
  });
});
