import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { doctorIn } from "../helpers/in-process.js";
import { cliTurn, ghostRefs, hook, machines, originRepo, pushAfterTurn } from "./remote-support.js";

const { a, bare } = machines();

/** Waits for something a detached process does (the test's timeout bounds it). */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((r) => setTimeout(r, 100));
}

describe("a remote that refuses to delete refs", () => {
  it("keeps a push's temporary ref: push says so and makes no more, doctor names it after a background push, and it goes once allowed", async () => {
    const remote = bare();
    const carriers = () => ghostRefs(a, remote).filter((ref) => ref.includes("/carriers/"));
    // git's own receive.denyDeletes guards branches only: the push's temporary ref goes as before.
    a.git(remote, "config", "receive.denyDeletes", "true");
    const repo = originRepo(a, "a", remote, { "f.txt": "0\n" });
    cliTurn(repo, "s", "1", () => repo.write({ "f.txt": "1\n" }));
    expect(repo.ok("push").refsLeft).toBeUndefined();
    expect(carriers()).toEqual([]);

    // A server that refuses every deletion (a hosting service's rules can).
    const refuser = hook(
      remote,
      "update",
      'if [ "$3" = 0000000000000000000000000000000000000000 ]; then echo "no deletions here" >&2; exit 1; fi',
    );
    cliTurn(repo, "s", "2", () => repo.write({ "f.txt": "2\n" }));
    const pushed = repo.ok("push");
    const kept = carriers();
    expect(kept).toHaveLength(1);
    expect(pushed.sessions).toEqual([{ session: "s", turns: 2, status: "updated" }]);
    expect(pushed.refsLeft).toEqual({ refs: kept, reason: expect.stringMatching(/^refused: hook declined/) });
    expect(pushed.refsLeft.reason).toContain("no deletions here");

    // Said on the terminal too; no new one is made while that one stays.
    cliTurn(repo, "s", "3", () => repo.write({ "f.txt": "3\n" }));
    const again = repo.cli(["push"]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `temporary ref left on the remote: ${kept[0]} (not deleted: refused: hook declined`,
    );
    expect(carriers()).toEqual(kept);

    // The push after a turn has no terminal: doctor names what it kept.
    pushAfterTurn(repo, { remote: "origin" });
    cliTurn(repo, "s", "4", () => repo.write({ "f.txt": "4\n" }));
    let problems: any[] = [];
    await until(async () => {
      problems = (await doctorIn(repo)).problems ?? [];
      return problems.length > 0;
    });
    expect(problems).toEqual([expect.objectContaining({ code: "push-refs-left" })]);
    expect(problems[0].message).toContain(kept[0]);
    expect(problems[0].message).toContain("no deletions here");

    // Allowed again: the next push deletes it, and doctor has nothing left to say.
    rmSync(refuser);
    cliTurn(repo, "s", "5", () => repo.write({ "f.txt": "5\n" }));
    await until(async () => carriers().length === 0 && (await doctorIn(repo)).problems.length === 0);
    a.git(remote, "fsck", "--connectivity-only", "--no-dangling");
  });
});
