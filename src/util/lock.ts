import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import { GhostcommitError } from "../errors.js";

interface LockOwner {
  pid: number;
  host: string;
  token: string;
  since: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * An exclusive lock file shared by processes on this machine. A lock whose owner died (kill -9)
 * is taken over, so a crash never leaves the store locked.
 */
export async function withLock<T>(file: string, work: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const token = randomBytes(8).toString("hex");
  const owner: LockOwner = { pid: process.pid, host: os.hostname(), token, since: Date.now() };
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    try {
      await fs.writeFile(file, JSON.stringify(owner), { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (await takeOverIfStale(file)) continue;
    if (Date.now() > deadline) {
      throw new GhostcommitError("locked", `another ghostcommit process holds ${file}`, { file });
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await work();
  } finally {
    try {
      const current = JSON.parse(await fs.readFile(file, "utf8")) as LockOwner;
      if (current.token === token) await fs.rm(file, { force: true });
    } catch {
      // already gone
    }
  }
}

async function takeOverIfStale(file: string): Promise<boolean> {
  let owner: LockOwner;
  try {
    owner = JSON.parse(await fs.readFile(file, "utf8")) as LockOwner;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    // Unreadable or half-written: stale only if it is old (its writer died mid-write).
    const stat = await fs.stat(file).catch(() => null);
    if (stat && Date.now() - stat.mtimeMs > 10_000) {
      await fs.rm(file, { force: true });
      return true;
    }
    return false;
  }
  if (owner.host === os.hostname() && !alive(owner.pid)) {
    // Rename first so two processes that both see the dead owner do not both delete a new lock.
    const aside = `${file}.stale-${randomBytes(4).toString("hex")}`;
    try {
      await fs.rename(file, aside);
      const moved = JSON.parse(await fs.readFile(aside, "utf8")) as LockOwner;
      if (moved.token !== owner.token) {
        // We moved a fresh lock by mistake: put it back if the slot is still free.
        await fs.link(aside, file).catch(() => {});
      }
      await fs.rm(aside, { force: true });
    } catch {
      // someone else handled it
    }
    return true;
  }
  return false;
}
