import { promises as fs } from "node:fs";
import path from "node:path";
import { heldByLive, liveSharedHolders } from "../util/lock.js";
import type { StoreContext } from "./context.js";
import { STORE_FILES } from "./layout.js";

/**
 * The temp files git writes in objects/pack while a pack comes in or is made: `tmp_pack_`,
 * `tmp_idx_` and `tmp_rev_` and six characters of mkstemp's (ours are `tmp_pack_gc_…`, never
 * these), and the finished pack `git repack` keeps as `.tmp-<its pid>-pack-<id>.*` until it moves
 * it in place (a gc killed or cut off by a reboot leaves it: as large as the store).
 */
const GIT_PACK_TEMP = /^(tmp_(pack|idx|rev)_[A-Za-z0-9]{6}|\.tmp-\d+-pack-[0-9a-f]{40,64}\.[a-z]+)$/;

/** The temp file git writes a loose object into (`objects/xx/tmp_obj_` and mkstemp's six). */
const GIT_LOOSE_TEMP = /^tmp_obj_[A-Za-z0-9]{6}$/;

/** Without /proc a git left running by a killed ghostcommit cannot be seen: only old files count. */
const UNSEEN_AGE_MS = 3_600_000;

export function isGitPackTemp(name: string): boolean {
  return GIT_PACK_TEMP.test(name);
}

export interface PackTemp {
  file: string;
  bytes: number;
  ino: number;
  mtimeMs: number;
}

/**
 * git's temp pack files in the shadow store that no live process is writing: a fetch killed
 * mid-transfer leaves one as large as what it had received; and the temp loose objects a git
 * that failed on a full disk left (holding the room the next write needs). Only the git processes ghostcommit
 * runs on the store write them: a fetch's (under the sync lock), gc's repack (under the gc lock;
 * `held` names those the caller holds) and a plain directory's snapshot adding a file over git's
 * bigFileThreshold (a writer, the shared side of the gc lock). So none is dead while a live
 * process holds one of those; and, as a git whose ghostcommit alone was killed goes on writing,
 * none while a live process other than ours works on the store (its GIT_DIR) or has one open.
 * The files are listed before those checks: one a process starts after them is not among them.
 */
export async function deadPackTemps(
  engine: StoreContext,
  held: { sync?: boolean; gc?: boolean } = {},
): Promise<PackTemp[]> {
  if (engine.refs.kind !== "shadow") return []; // the repo store's objects are the user's git's
  const found: PackTemp[] = [];
  const look = async (dir: string, temp: RegExp) => {
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      if (!temp.test(name)) continue;
      const stat = await fs.lstat(path.join(dir, name)).catch(() => null);
      if (stat?.isFile())
        found.push({ file: path.join(dir, name), bytes: stat.size, ino: stat.ino, mtimeMs: stat.mtimeMs });
    }
  };
  await look(path.join(engine.paths.objectsDir, "pack"), GIT_PACK_TEMP);
  // A loose object git was writing when it failed (a full disk: it leaves it, holding the room).
  for (const fanOut of await fs.readdir(engine.paths.objectsDir).catch(() => [] as string[]))
    if (/^[0-9a-f]{2}$/.test(fanOut)) await look(path.join(engine.paths.objectsDir, fanOut), GIT_LOOSE_TEMP);
  if (found.length === 0) return [];
  const lock = (name: string) => path.join(engine.paths.dir, name);
  if (!held.sync && heldByLive(lock(STORE_FILES.syncLock))) return [];
  if (!held.gc && heldByLive(lock(STORE_FILES.gcLock))) return [];
  if (liveSharedHolders(lock(STORE_FILES.writersDir)).some((pid) => pid !== process.pid)) return [];
  const busy = await storeInUse(
    engine.paths.gitDir,
    found.map((t) => t.file),
  );
  if (busy === true) return [];
  return busy === false ? found : found.filter((t) => Date.now() - t.mtimeMs > UNSEEN_AGE_MS);
}

/** Removes each of `temps` that is still the file listed, not one made since under its name. */
export async function removePackTemps(temps: PackTemp[]): Promise<PackTemp[]> {
  const removed: PackTemp[] = [];
  for (const temp of temps) {
    const now = await fs.lstat(temp.file).catch(() => null);
    if (!now || now.ino !== temp.ino || now.mtimeMs !== temp.mtimeMs || now.size !== temp.bytes) continue;
    await fs.rm(temp.file, { force: true });
    removed.push(temp);
  }
  return removed;
}

/**
 * `work` (a git that writes a pack: repack, fetch), whose temp pack goes if it fails (a full disk):
 * left, it would take what room there is and fail what comes next. Its error is rethrown.
 */
export async function removingTempPackOnFailure<T>(
  engine: StoreContext,
  held: { sync?: boolean; gc?: boolean },
  work: Promise<T>,
): Promise<T> {
  try {
    return await work;
  } catch (error) {
    await removePackTemps(await deadPackTemps(engine, held)).catch(() => []);
    throw error;
  }
}

/**
 * Whether a live process, other than this one and its children, has the store's git dir as its
 * GIT_DIR (every git ghostcommit runs on the store has) or has one of `files` open. Null where
 * processes cannot be seen (no /proc).
 */
async function storeInUse(gitDir: string, files: string[]): Promise<boolean | null> {
  const pids = await fs.readdir("/proc/self/fd").then(
    () => fs.readdir("/proc"),
    () => null,
  );
  if (pids === null) return null;
  const store = await fs.realpath(gitDir).catch(() => gitDir);
  const open = new Set(await Promise.all(files.map((f) => fs.realpath(f).catch(() => f))));
  for (const pid of pids) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const stat = await fs.readFile(`/proc/${pid}/stat`, "latin1").catch(() => "");
    // The parent's pid is the second field after the command name, which may hold spaces.
    if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid) continue;
    const environ = await fs.readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
    const named = environ.split("\0").find((entry) => entry.startsWith("GIT_DIR="));
    if (named) {
      const where = path.resolve(await fs.readlink(`/proc/${pid}/cwd`).catch(() => "/"), named.slice(8));
      if ((await fs.realpath(where).catch(() => where)) === store) return true;
    }
    for (const fd of await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
      if (open.has(await fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => ""))) return true;
    }
  }
  return false;
}
