import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { workDigest } from "../helpers/support.js";

const sandboxes: Sandbox[] = [];
afterAll(() => {
  for (const sandbox of sandboxes) sandbox.cleanup();
});

/** A sandbox per test: each has one data dir, so one store. */
function newSandbox(): Sandbox {
  const sandbox = new Sandbox();
  sandboxes.push(sandbox);
  return sandbox;
}

/** The shadow store's git dir (one workspace per data dir here). */
function storeGitDir(home: string): string {
  const workspaces = path.join(home, "workspaces");
  return path.join(workspaces, readdirSync(workspaces)[0], "git");
}

function objectCounts(sandbox: Sandbox, gitDir: string): { loose: number; ownPacks: number } {
  const text = execFileSync("git", ["count-objects", "-v"], {
    env: { ...sandbox.env, GIT_DIR: gitDir },
  }).toString();
  const packDir = path.join(gitDir, "objects", "pack");
  const names = readdirSync(packDir);
  const ownPacks = names.filter((n) => n.endsWith(".pack") && !names.includes(n.replace(/\.pack$/, ".keep")));
  return { loose: Number(/^count: (\d+)/m.exec(text)![1]), ownPacks: ownPacks.length };
}

describe("a capture's objects in one pack", () => {
  it("a first snapshot packs its objects; the next one reuses them, restore and gc keep them", () => {
    const sandbox = newSandbox();
    const repo = sandbox.repo("packed", { "README.md": "hello\n", "src/a/x.txt": "x\n" });
    // 24 files in 24 directories: blobs and trees enough for a pack in a new store.
    const files: Record<string, string> = {};
    for (let i = 0; i < 24; i++) files[`new/d${i}/file ${i}.txt`] = `content ${i}\n`.repeat(i + 1);
    files["src/a/x.txt"] = "x edited\n";
    repo.write(files);
    const first = repo.ok("snapshot");
    const gitDir = storeGitDir(sandbox.env.GHOSTCOMMIT_HOME!);
    const afterFirst = objectCounts(sandbox, gitDir);
    // The user's loose objects are linked into the store (borrowed); of its own, only the commit is loose.
    const borrowed = Number(/^(\d+) objects/.exec(repo.git("count-objects"))![1]);
    expect(afterFirst.ownPacks).toBe(1);
    expect(afterFirst.loose).toBe(borrowed + 1);
    const before = workDigest(repo.dir);

    // Nothing changed: the files' ids come from the hash cache, found in the pack; the trees
    // are the same. Only the new commit is written.
    repo.ok("snapshot");
    expect(objectCounts(sandbox, gitDir)).toEqual({ loose: borrowed + 2, ownPacks: 1 });

    repo.remove("new");
    repo.write({ "src/a/x.txt": "changed again\n" });
    repo.ok("restore", first.id);
    expect(workDigest(repo.dir)).toEqual(before);
    expect(repo.read("new/d23/file 23.txt")).toBe("content 23\n".repeat(24));

    repo.ok("gc");
    execFileSync("git", ["fsck", "--strict", "--no-dangling"], { env: { ...sandbox.env, GIT_DIR: gitDir } });
    repo.remove("new");
    repo.ok("restore", first.id);
    expect(workDigest(repo.dir)).toEqual(before);
  });

  it("turn after turn, small packs are merged and every snapshot stays whole", () => {
    const files: Record<string, string> = { "README.md": "hello\n" };
    for (let d = 0; d < 6; d++) files[`pkg${d}/mod/index.js`] = `export const v = ${d};\n`;
    const sandbox = newSandbox();
    const repo = sandbox.repo("turns", files);
    const taken: { id: string; digest: Record<string, string> }[] = [];
    for (let turn = 0; turn < 20; turn++) {
      // Each turn edits files in three packages and adds one: a dozen objects, a pack of its own.
      const edits: Record<string, string> = {};
      for (let d = 0; d < 3; d++)
        edits[`pkg${(turn + d) % 6}/mod/index.js`] = `export const v = ${turn * 10 + d};\n`;
      edits[`pkg${turn % 6}/new/turn-${turn}.js`] = `// turn ${turn}\n`;
      repo.write(edits);
      taken.push({ id: repo.ok("snapshot").id, digest: workDigest(repo.dir) });
    }
    const gitDir = storeGitDir(sandbox.env.GHOSTCOMMIT_HOME!);
    const { ownPacks } = objectCounts(sandbox, gitDir);
    // 20 captures of a dozen objects each made 20 packs; merging keeps them to at most 16.
    expect(ownPacks).toBeGreaterThan(0);
    expect(ownPacks).toBeLessThan(16);
    execFileSync("git", ["fsck", "--strict", "--no-dangling"], { env: { ...sandbox.env, GIT_DIR: gitDir } });
    for (const { id, digest } of [taken[0], taken[7], taken[19]]) {
      repo.ok("restore", id);
      expect(workDigest(repo.dir)).toEqual(digest);
    }
  });
});
