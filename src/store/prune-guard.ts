import { existsSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { runGit } from "../git/exec.js";
import { missingObjects } from "../git/cat-file.js";
import type { WrittenObjects } from "../git/objects.js";
import { alive } from "../util/process.js";

/**
 * The repo store writes a snapshot's objects into the user's repository and only then its ref.
 * A `git gc --prune=now` (or `git prune`) of the user's that walks the refs in between takes the
 * new objects as unreachable and deletes them: the snapshot's ref then names missing objects, and
 * every later `git gc` and `for-each-ref` of the user's fails on it. Git accepts this risk for its
 * own commands; a snapshot taken behind the user's back must not leave it. So, after writing the
 * ref, a snapshot checks that what it wrote is still there, once any gc that began before the ref
 * has finished.
 */

/** A gc of the user's that began before the snapshot's ref is waited for this long at most. */
const GC_WAIT_MS = 20_000;

/** The errors of snapshots whose objects a prune beside them removed (taken again, they work). */
const pruned = new WeakSet<Error>();

/** Runs `take` (a snapshot's write and publish) again, up to three times, while a prune beside it takes its objects. */
export async function retakenIfPruned<T>(take: () => Promise<T>, onRetake = () => {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await take();
    } catch (error) {
      if (!(error instanceof Error && pruned.has(error)) || attempt === 3) throw error;
      onRetake();
    }
  }
}

export function prunedError(missing: string): Error {
  const error = new GhostcommitError(
    "store-damaged",
    `a git gc or git prune running beside this snapshot removed objects it had just written (first: ${missing}), so it was not kept; take it again`,
    { oid: missing },
  );
  pruned.add(error);
  return error;
}

/**
 * Waits for a gc of the user's repository that began before `since` (ms) and may prune what is not
 * reachable now (its expiry reaches the present), then returns the written objects that are gone.
 */
export async function missingAfterGc(
  commonDir: string,
  objectsDir: string,
  written: WrittenObjects,
  since: number,
): Promise<string[]> {
  await waitForPruningGc(commonDir, since);
  const unsure = [
    ...written.loose.filter((oid) => !existsSync(path.join(objectsDir, oid.slice(0, 2), oid.slice(2)))),
    ...written.packs.filter((pack) => !existsSync(pack.file)).flatMap((pack) => pack.oids),
  ];
  if (unsure.length === 0) return [];
  // Not where they were written: a repack may have moved them into a pack of its own.
  return missingObjects(unsure, { cwd: commonDir, env: { GIT_DIR: commonDir } });
}

async function waitForPruningGc(commonDir: string, since: number): Promise<void> {
  const pidFile = path.join(commonDir, "gc.pid");
  const until = Date.now() + GC_WAIT_MS;
  let checked = false;
  while (Date.now() < until) {
    const running = gcRunning(pidFile, since);
    if (running === null) return;
    // Once: a gc with the default expiry (two weeks) spares objects written moments ago.
    if (!checked && !(await gcPrunesRecent(commonDir, running))) return;
    checked = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pid of a live gc on this machine that took its lock before `since` (ms), else null. */
function gcRunning(pidFile: string, since: number): number | null {
  try {
    // gc.pid is written as the gc starts: one written after the ref was sees the ref.
    if (statSync(pidFile).mtimeMs > since) return null;
    const [pid, host] = readFileSync(pidFile, "utf8").trim().split(" ");
    if (host !== os.hostname()) return null;
    return alive(Number(pid)) ? Number(pid) : null;
  } catch {
    return null;
  }
}

/** Whether the running gc may prune objects written just now: `--prune=now`, or a config saying so. */
async function gcPrunesRecent(commonDir: string, pid: number): Promise<boolean> {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
  } catch {
    return true; // cannot tell: wait
  }
  const given = args.filter((arg) => arg.startsWith("--prune")).pop();
  if (given === "--no-prune") return false;
  const expiry = given?.startsWith("--prune=")
    ? given.slice("--prune=".length)
    : await configured(commonDir, "gc.pruneExpire");
  // "2.weeks.ago" and the like spare what was written moments ago; "now", "all" and dates do not.
  return !/ago$|^never$/i.test(expiry);
}

async function configured(commonDir: string, key: string): Promise<string> {
  const result = await runGit(["config", "--get", key], {
    cwd: commonDir,
    env: { GIT_DIR: commonDir },
    okCodes: [0, 1],
  });
  const value = result.stdout.toString().trim();
  return result.code === 0 && value ? value : "2.weeks.ago";
}
