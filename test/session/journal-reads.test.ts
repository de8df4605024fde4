import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Journal, journalRecords } from "../../src/session/journal.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "gc-test-journal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kinds = (file: string) => journalRecords(file)?.records.map((r) => r.e);

// A process reads a journal several times (a hook: the undo notice, then the turn's beginning),
// parsing only what was appended since its last read: each read must still be the whole file's.
describe("reading a session journal again in one process", () => {
  it("sees what was appended since, a torn last line as parsing the whole file does, and a file put in its place", async () => {
    const journal = new Journal(dir, "s");
    await journal.append([{ e: "prompt", turn: "1" }]);
    expect(kinds(journal.file)).toEqual(["session", "prompt"]);
    await journal.append([{ e: "abandon", turn: "1" }]);
    expect(kinds(journal.file)).toEqual(["session", "prompt", "abandon"]);
    // A writer killed mid-append: a whole record without its newline counts, half a one does not.
    appendFileSync(journal.file, JSON.stringify({ e: "prompt", turn: "2", t: 1 }));
    expect(kinds(journal.file)).toEqual(["session", "prompt", "abandon", "prompt"]);
    appendFileSync(journal.file, '\n{"e":"abandon","tu');
    expect(kinds(journal.file)).toEqual(["session", "prompt", "abandon", "prompt"]);
    // A fetch writes a whole new journal in its place (another file renamed over it).
    const other = path.join(dir, "other.jsonl");
    writeFileSync(other, `${JSON.stringify({ e: "session", session: "s", t: 1 })}\n`);
    renameSync(other, journal.file);
    expect(kinds(journal.file)).toEqual(["session"]);
    // Rewritten in place with other bytes (not what ghostcommit does; an editor might).
    writeFileSync(journal.file, `${JSON.stringify({ e: "session", session: "x", t: 2 })}\n`);
    expect(journalRecords(journal.file)?.records).toEqual([{ e: "session", session: "x", t: 2 }]);
    rmSync(journal.file);
    expect(journalRecords(journal.file)).toBeNull();
  });

  it("gives records that cannot be changed in place, since a later read hands out the same ones", async () => {
    const journal = new Journal(dir, "frozen");
    await journal.append([{ e: "prompt", turn: "1" }]);
    const [, prompt] = journalRecords(journal.file)!.records;
    expect(() => {
      (prompt as { turn: string }).turn = "2";
    }).toThrow(TypeError);
    expect(journalRecords(journal.file)!.records[1]).toMatchObject({ e: "prompt", turn: "1" });
  });
});
