import { describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "./support.js";

const { repo } = sessionSandbox();

const skippedNotes = [{ path: "docs/notes.md", reason: "excluded", detail: "sparse-checkout" }];

describe("files outside a sparse checkout", () => {
  it("are left off the disk by a rewind's dry run, the rewind and a forced one alike, never called a conflict", async () => {
    const r = repo({ "src/a.ts": "a\n", "docs/notes.md": "notes\n" });
    await turn(r, "s", "1", () => r.write({ "docs/notes.md": "notes\nagent edit\n", "src/s.ts": "new\n" }));
    r.git("add", "-A");
    r.git("commit", "-qm", "keep the agent's work");
    r.git("sparse-checkout", "set", "src"); // the user narrows the checkout: docs/ leaves the disk
    expect(r.exists("docs/notes.md")).toBe(false);

    const plan = { written: [], deleted: ["src/s.ts"], skipped: skippedNotes };
    expect(r.ok("rewind", "--session", "s", "--to", "1", "--dry-run")).toMatchObject(plan);
    const forcedPlan = r.ok("rewind", "--session", "s", "--to", "1", "--dry-run", "--force");
    expect(forcedPlan).toMatchObject(plan);
    expect(forcedPlan.overridden).toBeUndefined();
    expect(r.ok("rewind", "--session", "s", "--to", "1")).toMatchObject(plan);
    expect(r.exists("docs/notes.md")).toBe(false);

    r.ok("redo", "--session", "s");
    const forced = r.cli(["rewind", "--session", "s", "--to", "1", "--force"]);
    expect([forced.status, forced.stdout]).toEqual([0, expect.not.stringContaining("overwrote")]);
    expect(forced.stdout).toContain("skip   docs/notes.md (excluded");
    expect(r.exists("docs/notes.md")).toBe(false);
    // Still outside the cone for the user's git: nothing for `sparse-checkout reapply` to warn about.
    expect(r.git("ls-files", "-t", "docs/notes.md")).toBe("S docs/notes.md\n");
    expect(r.status()).toBe(" D src/s.ts\n"); // the rewind's one change; docs/notes.md is not in it
  });

  it("include a hand-marked skip-worktree file deleted from disk: redo and its dry run agree, and leave it", async () => {
    const r = repo({ "docs/notes.md": "notes\n", "b.txt": "b\n" });
    await turn(r, "s", "1", () => r.write({ "docs/notes.md": "agent\n", "b.txt": "agent b\n" }));
    r.git("commit", "-qam", "keep the agent's work");
    r.ok("rewind", "--session", "s", "--to", "1");
    r.git("update-index", "--skip-worktree", "docs/notes.md");
    r.remove("docs/notes.md");

    // The redo's safety snapshot holds it at its index content, the agent's: nothing to do there.
    const plan = { written: ["b.txt"], deleted: [], skipped: [] };
    expect(r.ok("redo", "--session", "s", "--dry-run")).toMatchObject(plan);
    expect(r.ok("redo", "--session", "s")).toMatchObject(plan);
    expect([r.exists("docs/notes.md"), r.read("b.txt")]).toEqual([false, "agent b\n"]);
  });

  it("are not materialized by a restore of a snapshot taken when they were on disk", () => {
    const r = repo({ "src/a.ts": "a\n", "docs/notes.md": "notes\n" });
    r.write({ "docs/notes.md": "draft\n", "src/a.ts": "a2\n" });
    const snap = r.ok("snapshot");
    r.git("checkout", "-q", "--", ".");
    r.git("sparse-checkout", "set", "src");
    const report = r.ok("restore", snap.id);
    expect(report).toMatchObject({ written: ["src/a.ts"], deleted: [], skipped: skippedNotes });
    expect(r.exists("docs/notes.md")).toBe(false);
  });
});
