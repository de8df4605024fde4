import { describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "./support.js";

const { repo, plain } = sessionSandbox();

// A restore puts back files only: when the agent switched branches or committed during the turns
// rewound, git's HEAD stays where the agent left it, and the files now differ from it. Seen in a
// trial: after rewinding an agent's `git checkout`, `git checkout` back refused ("your local
// changes would be overwritten") and nothing had said why.
describe("a restore when git's HEAD moved since", () => {
  it("says where HEAD is and was after rewinding a turn that switched branches, and changes no git state", async () => {
    const r = repo({ "a.txt": "main\n" });
    r.git("branch", "-M", "main");
    r.git("checkout", "-q", "-b", "other");
    r.write({ "a.txt": "other\n" });
    r.git("commit", "-qam", "on other");
    r.git("checkout", "-q", "main");
    const mainHead = r.git("rev-parse", "HEAD").trim();
    const otherHead = r.git("rev-parse", "other").trim();

    await turn(r, "s", "1", () => r.git("checkout", "-q", "other"));
    expect(r.read("a.txt")).toBe("other\n");

    const json = r.ok("rewind", "--session", "s", "--to", "1");
    expect(json.written).toEqual(["a.txt"]);
    expect(json.head).toEqual({
      atCapture: mainHead,
      now: otherHead,
      branch: "other",
      branchesThere: ["main"],
    });
    expect(r.read("a.txt")).toBe("main\n");
    // Git's own state is the agent's: still on other, the file now modified against it.
    expect(r.git("symbolic-ref", "--short", "HEAD").trim()).toBe("other");
    expect(r.git("status", "--porcelain")).toBe(" M a.txt\n");

    const human = r.cli(["redo", "--session", "s"]);
    expect(human.status).toBe(0);
    // The redo's target (the files as the rewind found them) was captured on other: nothing said.
    expect(human.stdout).not.toMatch(/HEAD/);

    const again = r.cli(["rewind", "--session", "s", "--to", "1"]);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain(
      `git's HEAD is other at ${otherHead.slice(0, 12)}, not ${mainHead.slice(0, 12)} (where main is now) as when those files were captured: only files went back; the branch, commits and staged changes stay as git has them`,
    );
  });

  it("says so of a restore of a snapshot taken before a commit, dry run too, and not when HEAD is where it was", async () => {
    const r = repo({ "a.txt": "v1\n" });
    const before = r.ok("snapshot").id;
    const then = r.git("rev-parse", "HEAD").trim();
    r.write({ "a.txt": "v2\n" });
    // Where HEAD has not moved, a restore says nothing of it.
    const same = r.ok("restore", before, "--dry-run");
    expect(same.written).toEqual(["a.txt"]);
    expect(same.head).toBeUndefined();

    r.git("commit", "-qam", "v2");
    r.git("checkout", "-q", "--detach");
    const now = r.git("rev-parse", "HEAD").trim();
    const dry = r.ok("restore", before, "--dry-run");
    expect(dry.head).toEqual({ atCapture: then, now, branch: null, branchesThere: [] });
    const human = r.cli(["restore", before]);
    expect(human.stdout).toContain(
      `git's HEAD is detached at ${now.slice(0, 12)}, not ${then.slice(0, 12)} as when those files were captured: only files went back`,
    );
    expect(r.read("a.txt")).toBe("v1\n");
    expect(r.git("rev-parse", "HEAD").trim()).toBe(now);
    // Again: the files are as the snapshot has them, nothing goes back, and no line says it did.
    const again = r.cli(["restore", before]);
    expect(again.stdout).toContain("wrote 0 files, deleted 0");
    expect(again.stdout).not.toContain("went back");
  });

  it("says nothing in a plain directory, which has no HEAD", async () => {
    const d = plain({ "a.txt": "1\n" });
    const id = d.ok("snapshot").id;
    d.write({ "a.txt": "2\n" });
    const report = d.ok("restore", id);
    expect(report.written).toEqual(["a.txt"]);
    expect(report.head).toBeUndefined();
  });

  it("a refused rewind or redo says HEAD moved: a checkout since may be what changed the files", async () => {
    const r = repo({ "a.txt": "base\n" });
    r.git("branch", "-M", "main");
    r.git("checkout", "-q", "-b", "other");
    r.write({ "a.txt": "other\n" });
    r.git("commit", "-qam", "on other");
    const otherHead = r.git("rev-parse", "HEAD").trim();
    await turn(r, "s", "1", () => r.write({ "a.txt": "agent\n", "new.txt": "n\n" }));
    // The person stashes the agent's work and checks out main (found in a trial: the refusal only
    // said the file "was changed since").
    r.git("stash", "-q");
    r.git("checkout", "-q", "main");
    const mainHead = r.git("rev-parse", "HEAD").trim();
    const clause = `git's HEAD is main at ${mainHead.slice(0, 12)}, not ${otherHead.slice(0, 12)} (where other is now) as when those files were captured: a checkout since may be what changed them`;
    const head = { atCapture: otherHead, now: mainHead, branch: "main", branchesThere: ["other"] };
    for (const dry of [[], ["--dry-run"]]) {
      const refused = r.cli(["rewind", "--session", "s", "--to", "1", ...dry, "--json"]);
      expect(refused.status).toBe(3);
      expect(refused.json.conflicts).toEqual(["a.txt"]);
      expect(refused.json.head).toEqual(head);
      expect(refused.json.error.message).toContain(clause);
      expect(refused.stderr).toContain(clause);
    }
    expect(r.read("a.txt")).toBe("base\n");
    // Not said where HEAD is where it was.
    r.git("checkout", "-q", "other");
    r.write({ "a.txt": "mine\n" });
    const plain = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect(plain.status).toBe(3);
    expect(plain.json.head).toBeUndefined();
    expect(plain.json.error.message).not.toContain("HEAD");
  });
});
