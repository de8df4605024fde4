import { describe, expect, it } from "vitest";
import { sessionSandbox, turn } from "./support.js";
import { logIn } from "../helpers/in-process.js";

const { repo } = sessionSandbox();

describe("redo --force", () => {
  it("names the edits it overwrites (dry run and not, text and --json) and the command that brings them back", async () => {
    const r = repo({ "src/b.ts": "b\n", "src/c.ts": "c\n" });
    await turn(r, "s", "1", () => r.write({ "src/b.ts": "agent b\n", "src/c.ts": "agent c\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    r.write({ "src/b.ts": "user b\n" }); // the user's own edit since the rewind

    const refused = r.cli(["redo", "--session", "s", "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, ["src/b.ts"]]);
    // The rewind changed it last, then the person: said so (found in a trial).
    expect(refused.json.error.message).toMatch(
      /^redo refused: 1 file was changed since the rewind \(src\/b\.ts\)/,
    );
    const plan = r.ok("redo", "--session", "s", "--force", "--dry-run");
    expect(plan).toMatchObject({ written: ["src/b.ts", "src/c.ts"], overridden: ["src/b.ts"] });
    const shown = r.cli(["redo", "--session", "s", "--force", "--dry-run"]);
    expect(shown.stdout).toContain("would overwrite (--force) 1 conflict: src/b.ts\n");
    expect(shown.stdout).not.toContain("undo with");

    const forced = r.cli(["redo", "--session", "s", "--force"]);
    expect(forced.status).toBe(0);
    expect(forced.stdout).toContain("overwrote (--force) 1 conflict: src/b.ts\n");
    const undo = forced.stdout.match(/undo with: ghostcommit (restore [0-9a-f]{12})\n/);
    expect(undo).not.toBeNull();
    expect([r.read("src/b.ts"), r.read("src/c.ts")]).toEqual(["agent b\n", "agent c\n"]);
    r.ok(...undo![1].split(" "));
    expect([r.read("src/b.ts"), r.read("src/c.ts")]).toEqual(["user b\n", "c\n"]);
  });

  it("lists in --json what it overwrote on a branch the user checked out since the rewind", async () => {
    const r = repo({ "src/b.ts": "b\n" });
    await turn(r, "s", "1", () => r.write({ "src/b.ts": "agent b\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    r.git("checkout", "-q", "-b", "mine");
    r.write({ "src/b.ts": "user work on b\n" });
    r.git("commit", "-qam", "mine");
    const forced = r.ok("redo", "--session", "s", "--force");
    expect(forced).toMatchObject({ written: ["src/b.ts"], overridden: ["src/b.ts"] });
    r.ok("restore", forced.safety);
    expect(r.read("src/b.ts")).toBe("user work on b\n");
  });

  it("says nothing of overwriting when nothing was changed since the rewind", async () => {
    const r = repo({ "a.txt": "a\n" });
    await turn(r, "s", "1", () => r.write({ "a.txt": "agent\n" }));
    r.ok("rewind", "--session", "s", "--to", "1");
    const forced = r.cli(["redo", "--session", "s", "--force"]);
    expect([forced.status, forced.stdout]).toEqual([
      0,
      "restored turn 1 of session s\n  wrote  a.txt\nwrote 1 file, deleted 0\n",
    ]);
    expect((await logIn(r, "s"))[0].state).toBe("done");
  });
});
