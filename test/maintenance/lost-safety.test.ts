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
});
