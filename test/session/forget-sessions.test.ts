import { createHash } from "node:crypto";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { storeDir } from "../hardening/helpers.js";
import type { Repo } from "../helpers/repo.js";
import { openIn, sessionSandbox, turn } from "./support.js";
import { logIn } from "../helpers/in-process.js";

const { sandbox, repo } = sessionSandbox();
const DAY_MS = 24 * 3600 * 1000;

function journalOf(r: Repo, session: string): string {
  const name = createHash("sha256").update(session).digest("hex").slice(0, 32);
  return path.join(storeDir(sandbox, r.dir), "sessions", `${name}.jsonl`);
}

/** Makes a session look last used `days` ago: its records' times and its journal's mtime. */
function age(r: Repo, session: string, days: number): void {
  const file = journalOf(r, session);
  const shift = days * DAY_MS * 1000; // records are stamped in microseconds
  const lines = readFileSync(file, "utf8").trim().split("\n");
  const aged = lines.map((line) => {
    const record = JSON.parse(line);
    return JSON.stringify({ ...record, t: record.t - shift });
  });
  writeFileSync(file, `${aged.join("\n")}\n`);
  const then = new Date(Date.now() - days * DAY_MS);
  utimesSync(file, then, then);
}

/**
 * Drops every snapshot of `session` (as retention would once they expire), in-process: the
 * setting of the gc runs, which are the subject.
 */
async function dropSnapshots(r: Repo, session: string): Promise<void> {
  const ws = await openIn(sandbox, r.dir);
  const ids = (await ws.list()).filter((s) => s.session === session).map((s) => s.id);
  if (ids.length > 0) await ws.drop(ids);
}

const sessionsOf = (r: Repo) => (r.ok("sessions") as { session: string }[]).map((s) => s.session);

describe("session histories retention forgets", () => {
  it("gc forgets an old session whose snapshots are all gone, one whose conversation ended in a turn too, and keeps recent, live, open, unfinished and latest ones", async () => {
    const r = repo({ "a.txt": "0\n" });
    for (const session of ["gone", "recent", "live", "unfinished"]) {
      await turn(r, session, "1", () => r.write({ [`${session}.txt`]: `${session}\n` }));
    }
    const ws = await openIn(sandbox, r.dir);
    await ws.session("open").beginTurn("1");
    r.write({ "open.txt": "open\n" });
    // Interrupted, then the conversation ended (Claude Code's and Gemini CLI's SessionEnd): its
    // turn stays open in the journal, though nothing can write in it any more.
    await ws.session("ended").beginTurn("1");
    r.write({ "ended.txt": "ended\n" });
    await ws.session("ended").abandonTurn();
    await turn(r, "latest", "1", () => r.write({ "latest.txt": "x\n" }));
    for (const session of ["gone", "recent", "open", "ended", "unfinished"]) await dropSnapshots(r, session);
    // A rewind killed half-way (its record written before any file changed, never completed).
    const gone = ((await logIn(r, "unfinished")) as { after: string }[])[0].after;
    const pending = { e: "rewind", id: "r1", to: "1", turns: ["1"], safety: gone, written: [], deleted: [] };
    writeFileSync(
      journalOf(r, "unfinished"),
      `${JSON.stringify({ ...pending, pending: true, t: Date.now() * 1000 })}\n`,
      { flag: "a" },
    );
    // Months later (retentionDays is 30): all but "recent" were last used 40 days ago.
    for (const session of ["gone", "live", "open", "ended", "unfinished"]) age(r, session, 40);
    const report = r.ok("gc");
    expect(report.forgottenSessions).toBe(2);
    expect(sessionsOf(r).sort()).toEqual(["latest", "live", "open", "recent", "unfinished"]);
    // Forgotten: its id is one this workspace no longer knows.
    expect(r.cli(["log", "--session", "gone", "--json"]).json.error.code).toBe("not-found");
    // The latest session stays even once it is old and nothing is left of it.
    await dropSnapshots(r, "latest");
    age(r, "recent", 41);
    age(r, "latest", 40);
    expect(r.cli(["gc"]).stdout).toContain("forgot 1 session whose snapshots had all expired");
    expect(sessionsOf(r).sort()).toEqual(["latest", "live", "open", "unfinished"]);
    expect(r.ok("gc").forgottenSessions).toBe(0);
    // A session of no turn written since (a touch --session with a mistyped id) is not the
    // latest one log and rewind take: "latest" stays, the mistyped one goes once it is old.
    r.ok("touch", "--session", "typo", "a.txt");
    age(r, "typo", 39);
    expect(r.ok("gc").forgottenSessions).toBe(1);
    expect(sessionsOf(r).sort()).toEqual(["latest", "live", "open", "unfinished"]);
  });
});
