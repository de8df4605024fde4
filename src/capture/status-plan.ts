import fs from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { identityOf } from "../git/index-file.js";
import { STORE_FILES, storePathsAt } from "../store/layout.js";
import { ownedPrivately } from "../util/private-file.js";

/**
 * The plan of a status to start ahead (see status-ahead.ts): a file per directory commands run in,
 * beside the code cache, read only under the code cache's rules (it names a program's arguments).
 */

export interface StatusPlan {
  /** The directory the command ran in: the plan file is named after it. */
  from: string;
  /** Where status runs (the work tree's root), with what and under which extra environment. */
  cwd: string;
  args: string[];
  env: Record<string, string>;
  /** The throw-away git directory's HEAD line. */
  head: string;
  /** The workspace's data directory: its store, the private index copy and its stamp. */
  store: string;
  /** The user's index the private copy is made from. */
  userIndex: string;
}

/**
 * Status rewrites the whole private index copy (~60 ms for 100k files) whenever a cached directory
 * changed (a file created, deleted or renamed into it, as every restore does) or, with Watchman, to
 * record its new token. Rewriting it each time costs more than it saves: a status reads again only
 * the directories changed since the last write (a file whose stat changed but not its content is
 * hashed again), and Watchman answers from an older token with every file changed since. So
 * the copy is written by the first status after it was made (with Watchman the first two after
 * the watch began: git's first token is its own, the second Watchman's), then at most this often.
 */
const PERSIST_INTERVAL_MS = 60_000;
const WATCHMAN_TOKEN_WRITES = 2;

export interface IndexStamp {
  source: string | null;
  /** The core.ignoreCase its untracked cache was made under (absent: false). */
  ignoreCase?: boolean;
  /** Statuses that wrote the copy since it was made (or, with Watchman, the watch began). */
  writes?: number;
  writtenAt?: number;
}

/** Whether the next status should write its caches into the private copy. */
export function persistDue(stamp: IndexStamp | null, watchman: boolean, watchStarted: boolean): boolean {
  const writes = Number.isInteger(stamp?.writes) ? stamp!.writes! : 0;
  const writtenAt = typeof stamp?.writtenAt === "number" ? stamp.writtenAt : 0;
  return (
    watchStarted ||
    writes < (watchman ? WATCHMAN_TOKEN_WRITES : 1) ||
    Date.now() - writtenAt >= PERSIST_INTERVAL_MS
  );
}

/** Writes the plan for its directory (atomically; silently not at all where it cannot). */
export function writePlan(plan: StatusPlan): void {
  const file = planFile(plan.from);
  const temp = `${file}.${process.pid}.tmp`;
  try {
    const dir = path.dirname(file);
    // Beside the code cache; like it, never the data home itself: a command that stored nothing
    // leaves nothing behind.
    if (fs.existsSync(path.dirname(dir))) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!trustedDir(dir)) return;
    fs.writeFileSync(temp, JSON.stringify(plan), { mode: 0o600, flag: "wx" });
    fs.renameSync(temp, file);
    prunePlans(dir);
  } catch {
    fs.rmSync(temp, { force: true });
  }
}

/** How many directories keep a plan: one is written for each a capture runs in. */
const KEEP_PLANS = 64;

/** Keeps the most recently written plans (one is written only when its status changed). */
function prunePlans(dir: string): void {
  const plans = fs.readdirSync(dir).filter((name) => /^status-[0-9a-f]{16}\.json$/.test(name));
  if (plans.length <= KEEP_PLANS) return;
  const byAge = plans
    .map((name) => ({ name, mtime: fs.lstatSync(path.join(dir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { name } of byAge.slice(KEEP_PLANS)) fs.rmSync(path.join(dir, name), { force: true });
}

/**
 * The plan for `from`, when there is one this user alone could have written, for a store of this
 * data directory: a cache directory copied from another one (a data directory set up from a
 * used one) names that one's stores, whose status would only be killed, having cost its CPU.
 */
export function readPlanFor(from: string): StatusPlan | null {
  const plan = readPlan(planFile(from));
  const ours = plan?.store.startsWith(path.join(dataHome(), "workspaces") + path.sep);
  return plan?.from === from && ours ? plan : null;
}
/** The plan's file: in the code cache's directory, named after the directory a command runs in. */
function planFile(from: string): string {
  return path.join(dataHome(), "cache", `status-${fnv(from, 0x811c9dc5)}${fnv(from, 0x050c5d1f)}.json`);
}

function fnv(text: string, seed: number): string {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

function trustedDir(dir: string): boolean {
  const stat = fs.lstatSync(dir);
  return stat.isDirectory() && ownedPrivately(stat);
}

function readPlan(file: string): StatusPlan | null {
  if (!process.getuid || !trustedDir(path.dirname(file))) return null;
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || !ownedPrivately(stat)) return null;
    const plan = JSON.parse(fs.readFileSync(fd, "utf8")) as StatusPlan;
    const strings = (values: unknown[]) => values.every((value) => typeof value === "string");
    const shaped =
      strings([plan.from, plan.cwd, plan.head, plan.store, plan.userIndex]) &&
      Array.isArray(plan.args) &&
      strings(plan.args) &&
      typeof plan.env === "object" &&
      plan.env !== null &&
      strings(Object.values(plan.env));
    return shaped ? plan : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function readStamp(file: string): IndexStamp | null {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as IndexStamp;
  } catch {
    return null;
  }
}

/** Which version of a file is there (see `identityOf`), or "absent". */
export function fileMark(file: string): string {
  try {
    return identityOf(fs.statSync(file, { bigint: true })) ?? "absent";
  } catch {
    return "absent";
  }
}

/** What a plan's store holds that starting its status depends on. */
export function planFiles(plan: StatusPlan) {
  const { dir, tmpDir, gitDir } = storePathsAt(plan.store);
  return {
    tmpDir,
    gitDir,
    stamp: path.join(dir, STORE_FILES.statusIndexSource),
    // Rewritten by every restore before it changes a file, and held while one runs.
    lastSafety: path.join(dir, STORE_FILES.lastSafety),
    restoreLock: path.join(dir, STORE_FILES.restoreLock),
  };
}
