import { describe, expect, it } from "vitest";
import { cliTurn, cloneOf, machines, originRepo } from "../session/remote-support.js";
import { snapshotIn } from "../session/support.js";

/** Counts in the words of push, fetch and gc read right in the singular; zero is a duration. */

const { a, b, bare } = machines();

describe("push and fetch say how many turns in the right number", () => {
  it('"1 turn", "1 session", "1 new snapshot"', () => {
    const remote = bare();
    const onA = originRepo(a, "wording", remote, { "a.txt": "a\n" });
    cliTurn(onA, "s1", "1", () => onA.write({ "a.txt": "changed\n" }));
    const pushed = onA.cli(["push"]);
    expect(pushed.status).toBe(0);
    expect(pushed.stdout).toMatch(/: 1 session, \d+ snapshots? \(/);
    expect(pushed.stdout).toContain("s1  created, 1 turn\n");
    const onB = cloneOf(b, remote, "wording-b");
    const fetched = onB.cli(["fetch"]);
    expect(fetched.status).toBe(0);
    expect(fetched.stdout).toContain("1 session");
    expect(fetched.stdout).toMatch(/s1 {2}\w+, 1 turn\n/);
  });
});

describe("gc --older-than", () => {
  it("takes 0 as 0d", async () => {
    const r = originRepo(a, "zero", bare("zero.git"), { "a.txt": "a\n" });
    await snapshotIn(r, { message: "one" });
    await snapshotIn(r, { message: "two" });
    const bare0 = r.cli(["gc", "--older-than", "0", "--json"]);
    expect(bare0.status).toBe(0);
    expect(bare0.json.dropped).toHaveLength(2);
  });
});
