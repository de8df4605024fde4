import { mkdirSync } from "node:fs";
import { afterAll, expect, test } from "vitest";
import { Sandbox } from "../helpers/repo.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

test("restore never writes into a nested repository's work tree", () => {
  const repo = sandbox.repo("outer", { "README.md": "outer\n" });
  repo.write({ "vendor/lib/file.txt": "captured while vendor/lib was a plain directory\n" });
  const snap = repo.ok("snapshot");
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
  repo.write({ "fixture/data.txt": "original\n", "sub/f.txt": "o\n", "sub/.git": "not a gitfile\n" });
  mkdirSync(repo.path("fixture/.git"));
  const snap = repo.ok("snapshot");
  expect(repo.ok("show", snap.id).files).toEqual(["README.md", "fixture/data.txt", "sub/f.txt"]);
  repo.write({ "fixture/data.txt": "edited\n", "sub/f.txt": "e\n" });
  const report = repo.ok("restore", snap.id);
  expect(report).toMatchObject({ written: ["fixture/data.txt", "sub/f.txt"], skipped: [] });
  expect([repo.read("fixture/data.txt"), repo.read("sub/f.txt")]).toEqual(["original\n", "o\n"]);
});
