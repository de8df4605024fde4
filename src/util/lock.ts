import { randomHex } from "./crypto.js";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fsError, GhostcommitError } from "../errors.js";
import { alive } from "./process.js";
import { namesIn } from "./small-files.js";

interface LockOwner {
  pid: number;
  host: string;
  token: string;
  since: number;
}

/** A lock file older than this whose content cannot be read was left by a writer that died. */
const UNREADABLE_STALE_MS = 10_000;
/** The short-lived "break" lock, held only while a stale lock is removed. */
const BREAK_STALE_MS = 5_000;

/*
 * Lock files are read and written with synchronous calls: each is one tiny system call, and a
 * promise call's thread-pool round trips (four for a read) cost a plain directory's snapshot
 * ~8 ms to take and release its lock on a busy machine. Only the waits between tries yield.
 */

/**
 * Creates `file` holding `content`, atomically: the content is written to a private temp file
 * and hard-linked into place, so no other process ever sees an empty or half-written lock.
 * False when the lock is held.
 */
function createExclusive(file: string, content: string): boolean {
  const temp = `${file}.new-${randomHex(4)}`;
  try {
    // Inside the try: on a full disk the write fails after creating the file, which must not stay.
    try {
      writeFileSync(temp, content, { flag: "wx", mode: 0o600 });
    } catch (error) {
      throw fsError(error, "write a lock file in", path.dirname(file));
    }
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

function readOwner(file: string): LockOwner | null | "absent" {
  try {
    const owner = JSON.parse(readFileSync(file, "utf8")) as LockOwner;
    return owner && typeof owner.pid === "number" && typeof owner.token === "string" ? owner : null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "absent" : null;
  }
}

/** A wait past this is said (see `withLock`'s `waitingOn`). */
const WAIT_SAID_MS = 2000;

/**
 * An exclusive lock file shared by processes on this machine. A lock whose owner died (kill -9)
 * is taken over, so a crash never leaves the store locked. A live owner is waited for up to
 * `timeoutMs`; where `waitingOn` names what holds it ("another restore of this workspace"), a
 * wait past two seconds is told through `onWait` (a process stopped with Ctrl-Z, a slow disk:
 * silence would look like a hang), and the timeout's error names it and its process.
 */
export async function withLock<T>(
  file: string,
  work: () => Promise<T>,
  options: { timeoutMs?: number; waitingOn?: string; onWait?: (message: string) => void } = {},
): Promise<T> {
  const token = randomHex(8);
  const owner: LockOwner = { pid: process.pid, host: os.hostname(), token, since: Date.now() };
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 120_000);
  let told = false;
  let delay = 5;
  for (;;) {
    if (createExclusive(file, JSON.stringify(owner))) break;
    if (takeOverIfStale(file)) continue;
    const holder = options.waitingOn ? heldBy(file, options.waitingOn) : null;
    if (Date.now() > deadline) {
      const message = holder
        ? `${holder} has not finished in ${Math.round((Date.now() - started) / 1000)} s; nothing was changed (once it ends, run this again)`
        : `another ghostcommit process holds ${file}`;
      throw new GhostcommitError("locked", message, { file });
    }
    if (holder && !told && Date.now() - started > WAIT_SAID_MS) {
      told = true;
      options.onWait?.(
        `waiting for ${holder} to finish (up to ${Math.round((deadline - started) / 1000)} s)`,
      );
    }
    await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await work();
  } finally {
    const current = readOwner(file);
    if (current && current !== "absent" && current.token === token) rmSync(file, { force: true });
  }
}

/** What holds a lock, named for a person: `what` and its process, when that can be read. */
function heldBy(file: string, what: string): string {
  const owner = readOwner(file);
  if (owner === null || owner === "absent") return what;
  const since = new Date(owner.since).toTimeString().slice(0, 8);
  const here = owner.host === os.hostname();
  // A holder suspended (Ctrl-Z in its terminal) never finishes on its own: say how it goes on.
  const stopped =
    here && isStopped(owner.pid)
      ? `; it is stopped, as by Ctrl-Z: \`kill -CONT ${owner.pid}\` resumes it`
      : "";
  return `${what} (process ${owner.pid}${here ? "" : ` on ${owner.host}`}, since ${since}${stopped})`;
}

/** Whether a process of this host is stopped (state T in Linux's /proc; false where that cannot be read). */
function isStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return /^[Tt]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

/** Whether the lock's owner is gone (a dead process on this host, or an unreadable, old file). */
function isStale(file: string): "absent" | LockOwner | "unreadable" | false {
  const owner = readOwner(file);
  if (owner === "absent") return "absent";
  if (owner === null) {
    const stat = statSync(file, { throwIfNoEntry: false });
    return stat && Date.now() - stat.mtimeMs > UNREADABLE_STALE_MS ? "unreadable" : false;
  }
  return owner.host === os.hostname() && !alive(owner.pid) ? owner : false;
}

/**
 * Removes a lock whose owner died. Two processes may both see the dead owner; removal happens
 * under a short "break" lock and only after re-reading that the same dead owner still holds it,
 * so a fresh lock taken meanwhile by a live process is never removed.
 */
function takeOverIfStale(file: string): boolean {
  const first = isStale(file);
  if (first === "absent") return true;
  if (first === false) return false;
  const breakFile = `${file}.break`;
  const breaker = JSON.stringify({
    pid: process.pid,
    host: os.hostname(),
    token: randomHex(8),
  });
  if (!createExclusive(breakFile, breaker)) {
    // Someone else is breaking it; a break lock left by a killed breaker is itself stale when old.
    const stat = statSync(breakFile, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > BREAK_STALE_MS) rmSync(breakFile, { force: true });
    return false;
  }
  try {
    const again = isStale(file);
    if (again === "absent") return true;
    if (again === false) return false;
    const sameOwner =
      again === "unreadable" ? first === "unreadable" : first !== "unreadable" && again.token === first.token;
    if (sameOwner) rmSync(file, { force: true });
    return true;
  } finally {
    rmSync(breakFile, { force: true });
  }
}

/**
 * The shared side of a readers-writer lock whose exclusive side is the lock file `exclusiveFile`
 * (taken with withLock): any number of processes hold it at once, none while the exclusive side
 * is held. A holder announces itself with a file in `dir` first and only then checks the
 * exclusive lock, while the exclusive holder takes its lock first and then waits for the
 * announcements to go (waitForSharedHolders): one of the two always sees the other.
 */
export async function withSharedLock<T>(
  dir: string,
  exclusiveFile: string,
  work: () => Promise<T>,
  timeoutMs = 120_000,
): Promise<T> {
  const token = randomHex(8);
  const owner: LockOwner = { pid: process.pid, host: os.hostname(), token, since: Date.now() };
  const file = path.join(dir, `${process.pid}-${token}.lock`);
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  // Synchronous: every snapshot takes this before its status starts, and three thread-pool round
  // trips for a directory, a small file and a missing one cost more than the calls themselves.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (;;) {
    try {
      writeFileSync(file, JSON.stringify(owner), { mode: 0o600 });
    } catch (error) {
      rmSync(file, { force: true }); // an empty one (a full disk) would read as a holder for a while
      throw fsError(error, "write a lock file in", dir);
    }
    if (!existsSync(exclusiveFile) || takeOverIfStale(exclusiveFile)) break;
    rmSync(file, { force: true }); // step back so the exclusive holder can go on
    if (Date.now() > deadline) {
      throw new GhostcommitError("locked", `another ghostcommit process holds ${exclusiveFile}`, {
        file: exclusiveFile,
      });
    }
    await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await work();
  } finally {
    rmSync(file, { force: true });
    // Those of processes killed while holding it go too (one directory read, usually empty),
    // so a kill -9 is not reported by doctor after every later command.
    for (const dead of deadSharedHolders(dir)) rmSync(dead, { force: true });
  }
}

/** Whether a live process holds the lock file (or is writing it: unreadable, but new). */
export function heldByLive(file: string): boolean {
  return isStale(file) === false;
}

/** Whether a live process holds a `.ghostlock` in `dir`, or the shared side in `sharedDir`. */
export function anyHeldByLive(dir: string, sharedDir: string): boolean {
  const locks = namesIn(dir).filter((name) => name.endsWith(".ghostlock"));
  return locks.some((name) => heldByLive(path.join(dir, name))) || liveSharedHolders(sharedDir).length > 0;
}

/** The pids of the live holders of the shared side in `dir` (NaN for one still writing its file). */
export function liveSharedHolders(dir: string): number[] {
  return namesIn(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (isStale(file) !== false) return [];
    const owner = readOwner(file);
    return [owner && owner !== "absent" ? owner.pid : Number.NaN];
  });
}

/**
 * Waits, while holding the exclusive side, until no live process holds the shared side;
 * announcements of dead processes are removed. False when live holders remain at the deadline.
 */
/** Shared-side lock files in `dir` whose owners died (kill -9): doctor --repair removes them. */
export function deadSharedHolders(dir: string): string[] {
  return namesIn(dir)
    .map((name) => path.join(dir, name))
    .filter((file) => {
      const stale = isStale(file);
      return stale !== "absent" && stale !== false;
    });
}

export async function waitForSharedHolders(dir: string, timeoutMs = 60_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    let live = 0;
    for (const name of namesIn(dir)) {
      const file = path.join(dir, name);
      const stale = isStale(file);
      if (stale === "absent") continue;
      if (stale === false) live++;
      else rmSync(file, { force: true });
    }
    if (live === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}
