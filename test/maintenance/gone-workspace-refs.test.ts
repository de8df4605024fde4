import { execFileSync } from "node:child_process";
import { renameSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Sandbox } from "../helpers/repo.js";

/** doctor's findings (it exits 1 with any). */
function doctor(sandbox: Sandbox, cwd: string, store = "shadow"): { code: string; message: string }[] {
  return sandbox.cli(cwd, ["--store", store, "doctor", "--json"]).json.problems;
}

describe("doctor, after a worktree with repository-store snapshots was removed", () => {
  it("names its refs with the command that removes them; a worktree still there is not named", () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo("repo", { "a.txt": "a\n" });
    const gone = path.join(sandbox.home, "feature");
    const kept = path.join(sandbox.home, "kept");
    repo.git("worktree", "add", "-q", gone);
    repo.git("worktree", "add", "-q", kept);
    for (const dir of [gone, kept]) {
      sandbox.ok(dir, "--store", "repo", "snapshot");
      sandbox.ok(dir, "--store", "repo", "turn", "begin", "--session", "s", "--turn", "1");
      sandbox.ok(dir, "--store", "repo", "turn", "end", "--session", "s", "--turn", "1");
    }
    expect(doctor(sandbox, repo.dir)).toEqual([]);
    repo.git("worktree", "remove", "--force", gone);

    for (const store of ["shadow", "repo"]) {
      const problems = doctor(sandbox, repo.dir, store);
      expect(problems).toHaveLength(1);
      expect(problems[0].code).toBe("gone-workspace-refs");
      expect(problems[0].message).toMatch(
        new RegExp(
          `^refs/ghostcommit/[0-9a-f]{20}/ keeps 3 snapshots \\(repository store\\) of ${gone}, which is gone`,
        ),
      );
    }
    // The command it names, run as printed, removes them: git log --all no longer shows them.
    const all = () =>
      repo
        .git("log", "--all", "--format=%s")
        .split("\n")
        .filter((s) => s.startsWith("ghostcommit"));
    const before = all().length;
    const { message } = doctor(sandbox, repo.dir)[0];
    const command = /`([^`]+)`/.exec(message)![1];
    execFileSync("/bin/sh", ["-c", command], { cwd: repo.dir, env: sandbox.env });
    expect(all().length).toBe(before - 3);
    expect(doctor(sandbox, repo.dir)).toEqual([]);
    // The worktree still there keeps its snapshots and is found from the main one as before.
    expect(sandbox.ok(kept, "--store", "repo", "list")).toHaveLength(3);
  });

  it("names a moved directory's refs; moved back, they are found again", () => {
    const sandbox = new Sandbox();
    onTestFinished(() => sandbox.cleanup());
    const repo = sandbox.repo("repo", { "a.txt": "a\n" });
    const tree = path.join(sandbox.home, "tree");
    repo.git("worktree", "add", "-q", tree);
    sandbox.ok(tree, "--store", "repo", "snapshot");
    renameSync(tree, `${tree}-moved`);
    expect(doctor(sandbox, repo.dir).map((p) => p.code)).toEqual(["gone-workspace-refs"]);
    renameSync(`${tree}-moved`, tree);
    expect(doctor(sandbox, repo.dir)).toEqual([]);
    expect(sandbox.ok(tree, "--store", "repo", "list")).toHaveLength(1);
  });
});
