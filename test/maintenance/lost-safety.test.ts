import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileSandbox } from "../helpers/support.js";

const { sandbox, repo } = fileSandbox();

describe("doctor on a restore's safety snapshot whose ref another tool removed", () => {
  it("says the ref was removed, not that it expired, and --repair forgets it", () => {
    const r = repo({ "a.txt": "a\n" });
    const first = r.ok("snapshot").id;
    r.write({ "a.txt": "b\n" });
    const { safety } = r.ok("restore", first);
    const store = r.ok("doctor").store as string;
    sandbox.git(
      r.dir,
      "--git-dir",
      path.join(store, "git"),
      "update-ref",
      "-d",
      `refs/ghostcommit/snapshots/${safety}`,
    );
    const doctor = r.cli(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(doctor.json.problems).toEqual([
      expect.objectContaining({
        code: "lost-safety-snapshot",
        message: `the safety snapshot of the latest restore, ${safety}, is gone (its ref was removed outside ghostcommit, or a gc ran while that restore did): that restore cannot be undone; \`doctor --repair\` forgets it`,
      }),
    ]);
    expect(r.ok("doctor", "--repair").repaired.map((p: any) => p.code)).toEqual(["reset-state-file"]);
    expect(r.ok("doctor").ok).toBe(true);
  });

  it("judges the latest restore's safety snapshot in the store that holds it: the other store of the same repository neither reports nor forgets it, nor lets gc drop it", () => {
    const r = repo({ "a.txt": "a\n" });
    const first = r.ok("snapshot").id;
    r.write({ "a.txt": "b\n" });
    const { safety } = r.ok("restore", first);
    // The repository's own store (refs in its .git) has its own restores and gc.
    const inRepo = r.ok("--store", "repo", "snapshot").id;
    expect(r.ok("--store", "repo", "doctor").ok).toBe(true);
    expect(r.ok("--store", "repo", "doctor", "--repair").repaired ?? []).toEqual([]);
    r.write({ "a.txt": "c\n" });
    const repoRestore = r.ok("--store", "repo", "restore", inRepo);
    expect(r.read("a.txt")).toBe("a\n");
    // Each store's gc keeps its own latest restore's way back, whichever restore came last.
    r.ok("gc", "--keep", "0");
    r.ok("--store", "repo", "gc", "--keep", "0");
    expect(r.ok("list").map((s: { id: string }) => s.id)).toContain(safety);
    expect(r.ok("--store", "repo", "list").map((s: { id: string }) => s.id)).toContain(repoRestore.safety);
    expect(r.ok("doctor").ok).toBe(true);
    expect(r.ok("--store", "repo", "doctor").ok).toBe(true);
    // Dropping one store's by hand forgets it there only.
    r.ok("--store", "repo", "drop", repoRestore.safety);
    r.ok("gc", "--keep", "0");
    expect(r.ok("list").map((s: { id: string }) => s.id)).toContain(safety);
    expect(r.ok("--store", "repo", "doctor").ok).toBe(true);
  });
});
