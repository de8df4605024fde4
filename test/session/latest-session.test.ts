import { createHash } from "node:crypto";
import { utimesSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { storeDir } from "../hardening/helpers.js";
import type { Repo } from "../helpers/repo.js";
import { sessionSandbox, turn } from "./support.js";

const { sandbox, repo } = sessionSandbox();

function journalOf(r: Repo, session: string): string {
  const name = createHash("sha256").update(session).digest("hex").slice(0, 32);
  return path.join(storeDir(sandbox, r.dir), "sessions", `${name}.jsonl`);
}

const sessionsOf = (r: Repo) => (r.ok("sessions") as { session: string }[]).map((s) => s.session);

describe("the latest session", () => {
  it("is the one used last, whatever the order of the journals on disk or of their mtimes", async () => {
    const r = repo({ "a.txt": "0\n" });
    for (const session of ["zulu", "alpha", "mike", "kilo"]) {
      await turn(r, session, "1", () => r.write({ [`${session}.txt`]: "1\n" }));
    }
    await turn(r, "alpha", "2", () => r.write({ "alpha.txt": "2\n" }));
    expect(r.ok("log").map((t: { prompt: string; turn: string }) => t.turn)).toEqual(["1", "2"]);
    expect(sessionsOf(r)[0]).toBe("alpha");
    // A journal touched later without a newer record (copied back, say) does not make its session the latest.
    const later = new Date(Date.now() + 60_000);
    utimesSync(journalOf(r, "mike"), later, later);
    expect(r.ok("log").map((t: { changed: string[] }) => t.changed)).toEqual([["alpha.txt"], ["alpha.txt"]]);
    // The redo without --session resolves the same one.
    expect(r.cli(["redo"]).stderr).toContain("session alpha");
  });

  it("is not what an empty --session (an unset variable) means: that is refused, and nothing is rewound", async () => {
    const r = repo({ "a.txt": "0\n" });
    await turn(r, "other", "1", () => r.write({ "a.txt": "1\n" }));
    for (const args of [
      ["log", "--session", ""],
      ["rewind", "--session=", "--to", "1"],
      ["redo", "--session", ""],
      ["turn", "end", "--session", ""],
      ["touch", "--session=", "a.txt"],
    ]) {
      const refused = r.cli(args);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toBe(
        "ghostcommit: --session needs a session id, not an empty string (an unset variable?); leave it out for the most recently active session\n",
      );
    }
    expect(r.read("a.txt")).toBe("1\n");
    expect(r.ok("log").map((t: { turn: string; touched?: string[] }) => t.turn)).toEqual(["1"]);
  });

  it("is not a session a mistyped touch --session made, which has no turn", async () => {
    const r = repo({ "a.txt": "0\n" });
    await turn(r, "real", "1", () => r.write({ "a.txt": "1\n" }));
    expect(r.ok("touch", "--session", "reall", "a.txt").touched).toEqual(["a.txt"]);
    expect(sessionsOf(r).sort()).toEqual(["real", "reall"]);
    expect(r.ok("log").map((t: { turn: string }) => t.turn)).toEqual(["1"]);
    const rewound = r.ok("rewind", "--to", "1");
    expect([rewound.session, r.read("a.txt")]).toEqual(["real", "0\n"]);
  });
});
