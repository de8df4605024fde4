import { linkSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { STORE_FILES, readJson, writeFileAtomic } from "./layout.js";
import { namesIn } from "../util/small-files.js";
import { freeSupersededPacks, relinkRewrittenPack } from "./borrowed-packs.js";

interface BorrowState {
  /** mtime (ms) of each loose-object fan-out directory when last linked. */
  loose: Record<string, number>;
  packs: string[];
  crossDevice?: boolean;
  /**
   * This user may not hard-link the repository's object files (EPERM: another user's files where
   * the system protects hard links, as Linux's fs.protected_hardlinks does by default).
   */
  notOwned?: boolean;
}

/** A state file of the right shape; a damaged one is ignored (everything is relinked, which is harmless). */
export function isBorrowState(value: unknown): boolean {
  const v = value as BorrowState | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.loose === "object" &&
    v.loose !== null &&
    !Array.isArray(v.loose) &&
    Object.values(v.loose).every((t) => typeof t === "number") &&
    Array.isArray(v.packs) &&
    v.packs.every((p) => typeof p === "string")
  );
}

/**
 * Hard-links the user's object files (packs and loose objects, which git never modifies in place)
 * into the store. Synchronous calls: each is tiny, and a thread-pool round trip would cost more
 * than the work. Snapshots borrow the user's objects instead of copying them, and these links
 * keep the borrowed content alive after the user's `git gc --prune=now`, history rewrites or
 * branch deletion. A link costs no disk until the user's copy is deleted. Work per call is one
 * stat per fan-out directory plus the objects that are new since last time.
 */
export async function linkBorrowedObjects(
  storeDir: string,
  storeObjects: string,
  userObjects: string,
): Promise<void> {
  const stateFile = path.join(storeDir, STORE_FILES.borrowed);
  const state = await readJson<BorrowState>(stateFile, { loose: {}, packs: [] }, isBorrowState);
  if (state.crossDevice || state.notOwned) return;
  let changed = false;
  try {
    changed = linkPacks(storeObjects, userObjects, state) || changed;
    changed = linkLoose(storeObjects, userObjects, state) || changed;
  } catch (error) {
    // Links are a protection, never a condition of a snapshot: without them it borrows as the
    // repo store does (doctor says so).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EXDEV") state.crossDevice = true;
    else if (code === "EPERM") state.notOwned = true;
    else throw error;
    changed = true;
  }
  // Not flushed: a record lost in a crash only makes a later call link again (an existing link
  // counts as linked). A durable snapshot flushes the links and this record with the store's
  // file system (`publishSnapshot`).
  if (changed) await writeFileAtomic(stateFile, JSON.stringify(state), 0o600, false);
}

/**
 * Why borrowed objects are not protected by links (the store is on another file system, or the
 * repository's files are another user's), or null when they are.
 */
export async function borrowingUnprotected(storeDir: string): Promise<"cross-device" | "not-owned" | null> {
  const state = await readJson<BorrowState>(
    path.join(storeDir, STORE_FILES.borrowed),
    { loose: {}, packs: [] },
    isBorrowState,
  );
  return state.crossDevice ? "cross-device" : state.notOwned ? "not-owned" : null;
}

function linkPacks(storeObjects: string, userObjects: string, state: BorrowState): boolean {
  const userPacks = path.join(userObjects, "pack");
  const ourPacks = path.join(storeObjects, "pack");
  const names = namesIn(userPacks); // none: nothing to link
  const known = new Set(state.packs);
  let changed = false;
  for (const name of names) {
    if (!name.endsWith(".idx")) continue;
    const base = name.slice(0, -4);
    // Judged by the file, not the name: a known pack the user's gc rewrote under the same name
    // (another inode) is linked again, or the store would keep the old file as a private copy.
    if (relinkRewrittenPack(userPacks, ourPacks, base)) {
      if (!known.has(base)) {
        state.packs.push(base);
        changed = true;
      }
      continue;
    }
    mkdirSync(ourPacks, { recursive: true, mode: 0o700 });
    // .keep stops our own repack from rewriting (and so duplicating) a borrowed pack.
    writeFileSync(path.join(ourPacks, `${base}.keep`), "borrowed from the workspace repository\n", {
      mode: 0o600,
    });
    let linked = false;
    try {
      linked = linkIfMissing(path.join(userPacks, `${base}.pack`), path.join(ourPacks, `${base}.pack`));
      if (linked) linkIfMissing(path.join(userPacks, name), path.join(ourPacks, name));
    } finally {
      if (!linked) rmSync(path.join(ourPacks, `${base}.keep`), { force: true });
    }
    if (linked && !known.has(base)) {
      state.packs.push(base);
      changed = true;
    }
  }
  // Linked packs your git has deleted since (its repack wrote their objects into a new pack, just
  // linked): each is a private copy now, freed here where the store holds all its objects anyway.
  const listed = new Set(names);
  const gone = state.packs.filter((base) => !listed.has(`${base}.idx`));
  if (gone.length > 0 && names.length > 0) {
    freeSupersededPacks(storeObjects, gone);
    state.packs = state.packs.filter((base) => listed.has(`${base}.idx`));
    changed = true;
  }
  return changed;
}

/**
 * Only the fan-out directories that exist are looked at: a packed repository has few or none,
 * and 256 stats cost a later snapshot 4–6 ms.
 */
function linkLoose(storeObjects: string, userObjects: string, state: BorrowState): boolean {
  const passStart = Date.now();
  let changed = false;
  for (const fan of namesIn(userObjects).filter((name) => FAN_OUT.test(name))) {
    const dir = path.join(userObjects, fan);
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (!stat || state.loose[fan] === stat.mtimeMs) continue;
    const names = namesIn(dir); // none if it vanished (the user's gc): nothing to link
    // What the store holds already is listed once: linking where a link exists fails with an
    // exception (~40 µs each), and a changed directory usually holds many objects linked before.
    const storeFan = path.join(storeObjects, fan);
    let held: Set<string> | null = null;
    for (const name of names) {
      if (name.length !== 38) continue; // temp files being written
      if (held === null) {
        mkdirSync(storeFan, { recursive: true, mode: 0o700 });
        held = new Set(readdirSync(storeFan));
      }
      if (!held.has(name)) linkIfMissing(path.join(dir, name), path.join(storeFan, name));
    }
    // A directory's time moves only with the kernel's clock tick (milliseconds): an object git
    // adds just after this listing, within the same tick, leaves it unchanged. So a directory
    // changed lately is not marked done and is listed again by the next pass, as git treats an
    // index entry as racy when the file is as new as the index.
    if (passStart - stat.mtimeMs > RACY_MS) state.loose[fan] = stat.mtimeMs;
    else delete state.loose[fan];
    changed = true;
  }
  return changed;
}

const FAN_OUT = /^[0-9a-f]{2}$/;

/** How recent a fan-out directory's time must be for it to be listed again by the next pass. */
const RACY_MS = 2000;

/** Links source to target; false when the source vanished. EXDEV and EPERM propagate. */
function linkIfMissing(source: string, target: string): boolean {
  try {
    linkSync(source, target);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return true;
    if (code === "ENOENT") return false;
    throw error;
  }
}
