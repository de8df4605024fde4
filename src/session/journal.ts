import { sha256Hex } from "../util/sha256.js";
import {
  appendFileSync,
  closeSync,
  promises as fs,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  type Stats,
  statSync,
} from "node:fs";
import path from "node:path";
import { fsError } from "../errors.js";
import { nowMicros } from "../store/metadata.js";
import { syncDirs } from "../util/durable.js";
import { withLock } from "../util/lock.js";
import { foldJournal, type JournalRecord, type SessionState } from "./model.js";
import { namesIn } from "../util/small-files.js";
import { isPlainObject } from "../util/state-files.js";
import { trustedRecord } from "./record-check.js";

/** Journal records are written without `t`; the journal stamps them. */
export type NewRecord = WithoutTime<JournalRecord>;
type WithoutTime<T> = T extends unknown ? Omit<T, "t"> : never;

/**
 * One session's journal file, `sessions/<hash>.jsonl`, append-only. A record is one `write` of
 * one line, so a killed writer leaves at most a torn last line, which loading skips and the next
 * append fences off with a newline. Mutations run under the session's lock file.
 */
export class Journal {
  readonly file: string;
  private readonly lockFile: string;

  constructor(
    readonly dir: string,
    readonly session: string,
  ) {
    const name = sha256Hex(session).slice(0, 32);
    this.file = path.join(dir, `${name}.jsonl`);
    this.lockFile = path.join(dir, `${name}.ghostlock`);
  }

  /** Runs `work` holding this session's lock (stale locks of killed processes are taken over). */
  async locked<T>(work: () => Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withLock(this.lockFile, work);
  }

  /** The session's state; an absent journal is an empty session. */
  async load(): Promise<SessionState> {
    return (await readJournal(this.file, this.session))?.state ?? foldJournal(this.session, []);
  }

  /**
   * Appends records (stamped with the time) as one write; returns them as stored. `durable`: the
   * records survive a machine crash once this returns (a turn's end, a rewind, a redo).
   */
  async append(records: NewRecord[], durable = false): Promise<JournalRecord[]> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    let existing: string;
    try {
      existing = readFileSync(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT")
        throw fsError(error, "read session journal", this.file);
      existing = "";
    }
    const stamped: JournalRecord[] = [];
    if (!namesSession(existing, this.session))
      stamped.push({ e: "session", session: this.session, t: nowMicros() });
    for (const record of records) stamped.push({ ...record, t: nowMicros() } as JournalRecord);
    const fence = existing !== "" && !existing.endsWith("\n") ? "\n" : "";
    const text = `${fence}${stamped.map((r) => JSON.stringify(r)).join("\n")}\n`;
    // Private: a journal names the files a session changed.
    try {
      if (durable) {
        const handle = await fs.open(this.file, "a", 0o600);
        try {
          await handle.writeFile(text, "utf8");
          await handle.sync();
        } finally {
          await handle.close();
        }
      } else {
        appendFileSync(this.file, text, { encoding: "utf8", mode: 0o600 });
      }
    } catch (error) {
      throw fsError(error, "write session journal", this.file);
    }
    // A journal just created is a new directory entry.
    if (durable && existing === "") await syncDirs([this.dir]);
    return stamped;
  }
}

/*
 * Journals are read, and appended to where nothing waits for the disk, with synchronous calls:
 * every turn's hook reads its journal before its status starts, and a promise read is four
 * thread-pool round trips (a turn's end spent ~10 ms there on a busy machine).
 */

/** Reads one journal file; null when it is missing or names no session. */
export async function readJournal(
  file: string,
  expected?: string,
): Promise<{ state: SessionState; mtimeMs: number } | null> {
  const read = journalRecords(file);
  if (read === null) return null;
  const header = read.records.find((r) => r.e === "session");
  const session = expected ?? (header?.e === "session" ? header.session : undefined);
  if (session === undefined) return null;
  return { state: foldJournal(session, read.records), mtimeMs: read.mtimeMs };
}

/**
 * What this process parsed of each journal: a hook reads its session's more than once, a long one
 * holds hundreds of KB (~6 ms to parse), and a journal only grows by appends (a fetch puts a new
 * file in place). So a later read parses only the lines appended since the bytes it parsed,
 * found unchanged. The records are frozen: the folded state holds them as they are.
 */
const parsedBefore = new Map<string, { dev: number; ino: number; lines: Buffer; records: JournalRecord[] }>();

/** A journal's records (null when there is none), as `parseJournal` reads them. */
export function journalRecords(file: string): { records: JournalRecord[]; mtimeMs: number } | null {
  let data: Buffer;
  let stat: Stats;
  try {
    const fd = openSync(file, "r");
    try {
      stat = fstatSync(fd);
      data = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    // Absent is an empty session; unreadable (permissions, I/O) must not pass for one.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(error, "read session journal", file);
  }
  // Whole lines are kept; a torn last one (a writer killed mid-append) is read anew each time.
  const end = data.lastIndexOf(0x0a) + 1;
  const before = parsedBefore.get(file);
  const same =
    before !== undefined &&
    before.dev === stat.dev &&
    before.ino === stat.ino &&
    end >= before.lines.length &&
    data.compare(before.lines, 0, before.lines.length, 0, before.lines.length) === 0;
  const from = same ? before.lines.length : 0;
  const added = parseJournal(data.toString("utf8", from, end)).records.map(frozen);
  const lines = same ? [...before.records, ...added] : added;
  // The latest few only: a server (MCP, the web timeline) reads every session's, for days.
  parsedBefore.delete(file);
  if (parsedBefore.size >= 8) parsedBefore.delete(parsedBefore.keys().next().value as string);
  parsedBefore.set(file, { dev: stat.dev, ino: stat.ino, lines: data.subarray(0, end), records: lines });
  const torn = end < data.length ? parseJournal(data.toString("utf8", end)).records : [];
  return { records: [...lines, ...torn], mtimeMs: stat.mtimeMs };
}

function frozen<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) frozen(inner);
  return Object.freeze(value);
}

/** The journal files in `dir` (`.jsonl`) with their modification times, most recently modified first. */
export function journalFiles(dir: string): { file: string; mtimeMs: number }[] {
  const out: { file: string; mtimeMs: number }[] = [];
  for (const name of namesIn(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const file = path.join(dir, name);
    try {
      out.push({ file, mtimeMs: statSync(file).mtimeMs });
    } catch {
      // removed meanwhile (gc forgot it): not a session any more
    }
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/**
 * Slack for file systems whose times are coarse (whole or even seconds): a journal modified this
 * much before another's last record may still hold a later one.
 */
const MTIME_SLACK_MS = 2000;

/**
 * The most recently active session (as `readAllJournals` orders them), reading journals newest
 * modified first and only while one could be newer: a record is stamped before its write, so a
 * journal last modified before the best one's last record holds none later. With months of
 * conversations this reads one or two journals, not all of them. A session with no turn (only a
 * `touch`, under a mistyped `--session` or from hooks installed mid-conversation) has nothing to
 * log or rewind, and does not count.
 */
export async function latestJournal(dir: string): Promise<SessionState | null> {
  let best: { state: SessionState; mtimeMs: number } | null = null;
  for (const { file, mtimeMs } of journalFiles(dir)) {
    if (best && mtimeMs + MTIME_SLACK_MS < best.state.updatedAt / 1000) break;
    const journal = await readJournal(file);
    if (!journal || journal.state.turns.length === 0) continue;
    const [a, b] = [journal.state.updatedAt, best?.state.updatedAt ?? -1];
    if (!best || a > b || (a === b && journal.mtimeMs > best.mtimeMs)) best = journal;
  }
  return best?.state ?? null;
}

/** Every session journal in the store, most recently active first. */
export async function readAllJournals(dir: string): Promise<SessionState[]> {
  const names = namesIn(dir);
  const loaded = await Promise.all(
    names.filter((n) => n.endsWith(".jsonl")).map((n) => readJournal(path.join(dir, n))),
  );
  return loaded
    .filter((j): j is { state: SessionState; mtimeMs: number } => j !== null)
    .sort((a, b) => b.state.updatedAt - a.state.updatedAt || b.mtimeMs - a.mtimeMs)
    .map((j) => j.state);
}

/**
 * How long another session may be silent before a turn of this one began and still count as
 * running beside it. Its turn may be inside one long tool call (a build, a test run) that sends
 * no event until it ends: Claude Code lets a shell command run up to 10 minutes. A turn silent
 * for longer is taken as abandoned (Esc, then a new conversation), not as overlapping every
 * later turn of every session.
 */
export const SILENT_TURN_MS = 15 * 60_000;

/**
 * The sessions in `dir` whose turns may have run beside a turn that began at `startedAt`
 * (microseconds): those heard from since `SILENT_TURN_MS` before it (one stat per journal), excluding `except`.
 */
export function sessionsAround(dir: string, startedAt: number, except: string): Promise<SessionState[]> {
  return recentJournals(dir, startedAt / 1000 - SILENT_TURN_MS, except);
}

/** Journals modified at or after `sinceMs` (cheap: one stat per journal), excluding `except`. */
async function recentJournals(dir: string, sinceMs: number, except: string): Promise<SessionState[]> {
  const names = namesIn(dir);
  const out: SessionState[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl") || name === except) continue;
    const file = path.join(dir, name);
    let stat: import("node:fs").Stats;
    try {
      stat = statSync(file);
    } catch {
      continue;
    }
    if (stat.mtimeMs < sinceMs) continue;
    const journal = await readJournal(file);
    if (journal) out.push(journal.state);
  }
  return out;
}

/**
 * Whether a journal's text holds its session's header record. Only lines that can be one are
 * parsed: an append needs no more of a long session's journal than that.
 */
function namesSession(text: string, session: string): boolean {
  for (let at = text.indexOf(SESSION_TAG); at !== -1; at = text.indexOf(SESSION_TAG, at + 1)) {
    const start = text.lastIndexOf("\n", at) + 1;
    const end = text.indexOf("\n", at);
    try {
      const record = JSON.parse(text.slice(start, end === -1 ? undefined : end));
      if (record?.e === "session" && record.session === session) return true;
    } catch {
      // damaged: not a header
    }
  }
  return false;
}

const SESSION_TAG = '"e":"session"';

/**
 * Parses a journal. A line that is not a whole JSON record (the torn tail of a killed writer,
 * or damage) is skipped, never fatal. Returns the records and whether the text ends mid-line.
 */
export function parseJournal(text: string): { records: JournalRecord[]; torn: boolean; untrusted: number } {
  const records: JournalRecord[] = [];
  const lines = text.split("\n");
  const torn = lines[lines.length - 1] !== "";
  let untrusted = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      const record = JSON.parse(line) as JournalRecord;
      if (!isPlainObject(record) || typeof record.e !== "string") continue;
      if (trustedRecord(record)) records.push(record);
      else untrusted++; // a path outside the workspace: see trustedRecord
    } catch {
      // torn or damaged: the fact it would have recorded did not happen
    }
  }
  return { records, torn, untrusted };
}
