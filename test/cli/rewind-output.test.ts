import { describe, expect, it } from "vitest";
import { describeRewind } from "../../src/cli/commands/rewind.js";
import type { RewindReport } from "../../src/types.js";

// The words a person reads after a rewind run again to finish one a full disk cut short: the
// state it describes comes from the same report the command line prints with --json.
describe("a resumed rewind's output", () => {
  const resumed = (skipped: RewindReport["skipped"]): string =>
    describeRewind({
      session: "w",
      to: "2",
      rewoundTurns: ["2"],
      resumed: true,
      written: ["a.txt"],
      deleted: [],
      skipped,
      safety: null,
    }).replace(/\x1b\[[0-9;]*m/g, "");

  it("says it finished only when every file was written", () => {
    expect(resumed([]).split("\n")[0]).toBe(
      "finished rewinding turn 2 of session w (files as before turn 2)",
    );
    const still = resumed([{ path: "a.bin", reason: "io", errno: "ENOSPC" }]);
    expect(still.split("\n")[0]).toBe("went on rewinding turn 2 of session w (files as before turn 2)");
    expect(still).not.toContain("finished rewinding");
    expect(still).toContain("not finished: `ghostcommit rewind --session w --to 2` finishes it");
  });
});
