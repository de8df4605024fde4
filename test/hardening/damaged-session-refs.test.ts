import { rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { machines, originRepo } from "../session/remote-support.js";
import { turn } from "../session/support.js";
import { storeDir } from "./helpers.js";

const { a, bare } = machines();

describe("a pushed session whose objects the store lost", () => {
  it("doctor names the ref that keeps it, gc and fetch say to run doctor, repair removes it and the next fetch brings it back", async () => {
    const remote = bare();
    const repo = originRepo(a, "ws", remote, { "a.txt": "one\n" });
    await turn(repo, "s1", "t1", () => repo.write({ "a.txt": "two\n" }));
    repo.ok("push");
    const gitDir = path.join(storeDir(a), "git");
    const store = (...args: string[]) => a.git(a.home, `--git-dir=${gitDir}`, ...args);
    const [ref, commit] = store(
      "for-each-ref",
      "--format=%(refname) %(objectname)",
      "refs/ghostcommit/remote-sessions/",
    )
      .trim()
      .split(" ");
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    // The session commit a push wrote is loose in the store: lost, as with a damaged pack.
    rmSync(path.join(gitDir, "objects", commit.slice(0, 2), commit.slice(2)));

    const found = repo.cli(["doctor", "--json"]);
    expect(found.status).toBe(1);
    expect(found.json.problems).toEqual([
      expect.objectContaining({ code: "dangling-session-ref", message: expect.stringContaining(ref) }),
    ]);
    const gc = repo.cli(["gc", "--json"]);
    expect(gc.status).toBe(1);
    expect(gc.json.error.code).toBe("store-damaged");
    expect(gc.json.error.message).toContain("`ghostcommit doctor`");

    const fetched = repo.cli(["fetch", "--json"]);
    expect(fetched.status).toBe(1);
    expect(fetched.json.error.code).toBe("store-damaged");
    expect(fetched.json.error.message).toContain("`ghostcommit doctor`");
    const repaired = repo.ok("doctor", "--repair");
    expect(repaired.repaired.map((r: any) => r.code)).toEqual(["removed-dangling-session-ref"]);
    expect(repaired.ok).toBe(true);
    expect(store("for-each-ref", "refs/ghostcommit/remote-sessions/")).toBe("");
    repo.ok("fetch");
    expect(store("for-each-ref", "--format=%(objectname)", "refs/ghostcommit/remote-sessions/").trim()).toBe(
      commit,
    );
    expect(repo.cli(["gc"]).status).toBe(0);
    expect(repo.ok("doctor").ok).toBe(true);
    // The session's own turns were never touched.
    repo.ok("rewind", "--session", "s1", "--to", "t1");
    expect(repo.read("a.txt")).toBe("one\n");
  });
});
