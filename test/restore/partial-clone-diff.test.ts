import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Repo } from "../helpers/repo.js";
import { fileSandbox } from "../helpers/support.js";

const { sandbox, repo } = fileSandbox();

describe("diff in a partial clone's sparse checkout", () => {
  it("shows what it has, names the files whose content the clone never downloaded, and fetches nothing", () => {
    const origin = repo({ "in/a.txt": "a1\n", "out/b.txt": "b1\n" });
    origin.write({ "in/a.txt": "a2\n", "out/b.txt": "b2\n" });
    origin.git("commit", "-qam", "two");
    origin.git("config", "uploadpack.allowFilter", "true");
    const cloneDir = path.join(sandbox.home, "partial");
    execFileSync("git", ["clone", "-q", "--filter=blob:none", "--sparse", `file://${origin.dir}`, cloneDir], {
      env: sandbox.env,
    });
    const r = new Repo(sandbox, cloneDir);
    r.git("sparse-checkout", "set", "in");
    const first = r.ok("snapshot").id;
    // Back one commit: git fetches the cone's blob it now needs, never out/b.txt's.
    r.git("checkout", "-q", "HEAD~1");
    const second = r.ok("snapshot").id;
    const unfetched = () => r.git("rev-list", "--objects", "--missing=print", "--all").match(/^\?/gm)?.length;
    const before = unfetched();
    expect(before).toBe(2); // out/b.txt at both commits

    expect(r.cli(["diff", first, second, "--name-status"]).stdout).toBe("M\tin/a.txt\nM\tout/b.txt\n");
    const note = "not shown, their content never downloaded by this partial clone: out/b.txt\n";
    const stat = r.cli(["diff", first, second, "--stat"]);
    expect(stat.stderr).toBe("");
    expect(stat.status).toBe(0);
    expect(stat.stdout).toContain(" in/a.txt | 2 +-\n");
    expect(stat.stdout).not.toContain(" out/b.txt ");
    expect(stat.stdout.endsWith(note)).toBe(true);
    const patch = r.cli(["diff", first, second, "--patch"]);
    expect(patch.status).toBe(0);
    expect(patch.stdout).toContain("-a2\n+a1\n");
    expect(patch.stdout.endsWith(note)).toBe(true);
    // Only the undownloaded file named: nothing else to show.
    expect(r.cli(["diff", first, second, "--stat", "--", "out"]).stdout).toBe(note);
    expect(unfetched()).toBe(before);
  });
});
