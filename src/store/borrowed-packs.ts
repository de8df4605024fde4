import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { namesIn } from "../util/small-files.js";

/**
 * A borrowed pack is judged by the file, not its name: git names a pack after its checksum, so
 * the user's `git gc` or `git repack -ad` on unchanged content writes a new file under the same
 * name. The store's link then holds the old file alone (a private copy of the whole pack) while
 * the name still matches, and nothing would ever free it.
 */

/** Whether two paths name the same file (same device and inode). */
export function sameFile(a: string, b: string): boolean {
  const x = lstatSync(a, { throwIfNoEntry: false });
  const y = lstatSync(b, { throwIfNoEntry: false });
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

/**
 * Where the user's pack `base` is another file than the store's same-named one, the store's is
 * replaced by a link to the user's. Same name, same checksum: the same bytes, so the swap changes
 * no object a snapshot reads (a reader that opened the old file keeps it until it closes). Only
 * done when both the pack's and the index's sizes match; otherwise gc releases the old copy.
 * True when the store's files are links to the user's now. EXDEV propagates.
 */
export function relinkRewrittenPack(userPacks: string, ourPacks: string, base: string): boolean {
  const files = [`${base}.pack`, `${base}.idx`];
  const pairs = files.map((name) => ({
    theirs: lstatSync(path.join(userPacks, name), { throwIfNoEntry: false }),
    ours: lstatSync(path.join(ourPacks, name), { throwIfNoEntry: false }),
    name,
  }));
  if (pairs.some((p) => !p.theirs || !p.ours)) return false;
  if (pairs.every((p) => p.theirs?.dev === p.ours?.dev && p.theirs?.ino === p.ours?.ino)) return true;
  if (pairs.some((p) => p.theirs?.size !== p.ours?.size)) return false;
  // Older git named a pack after its object list, not its bytes: the same name may then hold
  // other deltas at other offsets. Equal trailers (each file's checksum of its own bytes) prove
  // the same bytes, so a crash between the two renames below pairs nothing mismatched.
  if (!pairs.every((p) => tail(path.join(userPacks, p.name)).equals(tail(path.join(ourPacks, p.name)))))
    return false;
  for (const { name } of pairs) {
    const target = path.join(ourPacks, name);
    // Not a name git reads as a pack (no .pack/.idx end), so a crash between the two calls leaves
    // only a harmless extra link.
    const temp = `${target}.relink-${process.pid}`;
    rmSync(temp, { force: true });
    try {
      linkSync(path.join(userPacks, name), temp);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false; // the user's gc again
      throw error;
    }
    renameSync(temp, target);
  }
  return true;
}

/** A pack's or an index's last 40 bytes: its trailing checksum (and, for an index, its pack's). */
function tail(file: string): Buffer {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(40, size));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer;
  } finally {
    closeSync(fd);
  }
}

/** Index bytes a capture reads at most to prove a left-behind pack redundant (~140,000 objects, ~0.2 s once per repack of yours). */
export const FREE_CHECK_INDEX_BYTES = 4 * 1024 * 1024;

const FANOUT_END = 8 + 256 * 4;

/**
 * Packs the store linked whose originals your git has since deleted (its repack wrote their
 * objects into a new pack, which the store links too): each is a private copy now. One whose
 * every object another pack of the store (not one of these) or a loose object of the store holds
 * is removed at once, so a repack by your git does not grow the store by your repository's size
 * until gc. The rest, and all of them when their indexes would take more than
 * FREE_CHECK_INDEX_BYTES to read, are left to gc (which repacks only what snapshots need).
 */
export function freeSupersededPacks(storeObjects: string, gone: string[]): void {
  const ourPacks = path.join(storeObjects, "pack");
  const leaving = new Set(gone);
  const names = namesIn(ourPacks);
  const present = new Set(names);
  const bases = names.filter((n) => n.endsWith(".idx")).map((n) => n.slice(0, -4));
  const sizes = bases.map(
    (b) => statSync(path.join(ourPacks, `${b}.idx`), { throwIfNoEntry: false })?.size ?? 0,
  );
  if (sizes.reduce((a, b) => a + b, 0) > FREE_CHECK_INDEX_BYTES) return;
  const others: Buffer[] = [];
  for (const base of bases) {
    if (leaving.has(base) || !present.has(`${base}.pack`)) continue;
    const index = readIndex(path.join(ourPacks, `${base}.idx`));
    if (index) others.push(index);
  }
  for (const base of gone) {
    if (!present.has(`${base}.idx`)) continue;
    const index = readIndex(path.join(ourPacks, `${base}.idx`));
    if (!index || !everyObjectElsewhere(index, others, storeObjects)) continue;
    // The index first: once it is gone no reader finds the pack, and one that opened it already
    // finds its objects again in the other packs.
    for (const ext of [".idx", ".pack", ".rev", ".bitmap", ".keep"]) {
      rmSync(path.join(ourPacks, `${base}${ext}`), { force: true });
    }
  }
}

/** A version 2 pack index, whole; null if it is not one or cut short. */
function readIndex(file: string): Buffer | null {
  let index: Buffer;
  try {
    index = readFileSync(file);
  } catch {
    return null;
  }
  if (index.length < FANOUT_END + 40 || index.readUInt32BE(0) !== 0xff744f63 || index.readUInt32BE(4) !== 2)
    return null;
  const count = index.readUInt32BE(FANOUT_END - 4);
  return index.length >= FANOUT_END + count * 28 + 40 ? index : null;
}

function everyObjectElsewhere(index: Buffer, others: Buffer[], storeObjects: string): boolean {
  const count = index.readUInt32BE(FANOUT_END - 4);
  for (let i = 0; i < count; i++) {
    const at = FANOUT_END + i * 20;
    if (others.some((other) => holds(other, index, at))) continue;
    const hex = index.toString("hex", at, at + 20);
    if (!existsSync(path.join(storeObjects, hex.slice(0, 2), hex.slice(2)))) return false;
  }
  return true;
}

/** Whether `other` lists the object name at `at` in `source` (binary search in its fan-out bucket). */
function holds(other: Buffer, source: Buffer, at: number): boolean {
  const first = source[at];
  let low = first === 0 ? 0 : other.readUInt32BE(8 + (first - 1) * 4);
  let high = other.readUInt32BE(8 + first * 4);
  while (low < high) {
    const middle = (low + high) >>> 1;
    const name = FANOUT_END + middle * 20;
    const order = other.compare(source, at, at + 20, name, name + 20);
    if (order === 0) return true;
    // `order` compares source's name with other's: positive when other's is the larger one.
    if (order > 0) high = middle;
    else low = middle + 1;
  }
  return false;
}
