import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { snapshotIn } from "../session/support.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

test("restore never writes into a nested repository's work tree", async () => {
  const repo = sandbox.repo("outer", { "README.md": "outer\n" });
  repo.write({ "vendor/lib/file.txt": "captured while vendor/lib was a plain directory\n" });
  const snap = await snapshotIn(repo);
  // vendor/lib becomes a repository of its own and its file changes there
  repo.remove("vendor/lib/file.txt");
  sandbox.git(repo.path("vendor/lib"), "init", "-q");
  repo.write({ "vendor/lib/other.txt": "belongs to the nested repository\n" });

  const report = repo.ok("restore", snap.id);
  expect(report.written).toEqual([]);
  expect(report.skipped).toEqual([{ path: "vendor/lib/file.txt", reason: "excluded" }]);
  expect(repo.exists("vendor/lib/file.txt")).toBe(false);
  expect(repo.read("vendor/lib/other.txt")).toBe("belongs to the nested repository\n");
});

test("a .git that git takes for no repository (an empty fixture directory, a stray file) does not stop a restore", () => {
  const repo = sandbox.repo("fixtures", { "README.md": "r\n" });
  repo.write({
    "fixture/data.txt": "original\n",
    "sub/f.txt": "o\n",
    "sub/.git": "not a gitfile\n",
    "wt/c.txt": "c\n",
    "wt/.git": "gitdir: /nonexistent/worktree\n", // a gitfile pointing nowhere
  });
  mkdirSync(repo.path("fixture/.git"));
  const snap = repo.ok("snapshot");
  expect(snap.excluded).toEqual([]);
  const files = ["README.md", "fixture/data.txt", "sub/f.txt", "wt/c.txt"];
  expect(repo.ok("show", snap.id).files).toEqual(files);
  repo.write({ "fixture/data.txt": "edited\n", "sub/f.txt": "e\n", "wt/c.txt": "e\n" });
  const report = repo.ok("restore", snap.id);
  expect(report).toMatchObject({ written: files.slice(1), skipped: [] });
  expect(files.slice(1).map((f) => repo.read(f))).toEqual(["original\n", "o\n", "c\n"]);

  // The same in a plain directory (no git around it).
  const plain = sandbox.dir("plain-fixtures");
  writeFileSync(path.join(plain, "top.txt"), "top\n");
  mkdirSync(path.join(plain, "proj/.git"), { recursive: true });
  writeFileSync(path.join(plain, "proj/main.c"), "work\n");
  const plainSnap = sandbox.ok(plain, "snapshot");
  expect([plainSnap.fileCount, plainSnap.excluded]).toEqual([2, []]);
  rmSync(path.join(plain, "proj"), { recursive: true });
  sandbox.ok(plain, "restore", plainSnap.id);
  expect(readFileSync(path.join(plain, "proj/main.c"), "utf8")).toBe("work\n");
});
