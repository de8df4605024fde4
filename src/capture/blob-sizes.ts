import path from "node:path";
import { constants as fsConstants, promises as fs } from "node:fs";
import { runGit } from "../git/exec.js";
import type { OidTable } from "../git/oid-table.js";
import { type StorePaths, writeFileAtomic } from "../store/layout.js";

/**
 * Blob sizes for the clean proof: the store's table of those already known (a blob's size never
 * changes) and git's answers for the rest, matched against the index by the ids' bytes.
 */

/** One record of the blob size table: the blob id's 20 bytes, then its size (48 bits, big-endian). */
const SIZE_RECORD = 26;
const SIZES_MAGIC = Buffer.from("ghostcommit blob sizes 1\n");

/** Whether `data` is a table this version wrote: a damaged or older one counts as none. */
export function isSizeTable(data: Buffer | null): data is Buffer {
  return (
    data !== null &&
    data.length >= SIZES_MAGIC.length &&
    data.subarray(0, SIZES_MAGIC.length).equals(SIZES_MAGIC) &&
    (data.length - SIZES_MAGIC.length) % SIZE_RECORD === 0
  );
}

/** How many records a table holds (one blob may be in several). */
export function sizeTableRecords(data: Buffer): number {
  return (data.length - SIZES_MAGIC.length) / SIZE_RECORD;
}

/** Applies the cached table (a blob's size never changes). */
export function applySizeTable(data: Buffer, table: OidTable, sizes: Float64Array): void {
  for (let at = SIZES_MAGIC.length; at < data.length; at += SIZE_RECORD) {
    // By hand, as in sizeRecords: a checked reader call per record costs more than the lookup.
    const high = (data[at + 20] << 8) | data[at + 21];
    const low = ((data[at + 22] << 24) | (data[at + 23] << 16) | (data[at + 24] << 8) | data[at + 25]) >>> 0;
    const size = high * 2 ** 32 + low;
    for (let found = table.firstWithId(data, at); found !== -1; found = table.nextWithSameId(found)) {
      sizes[table.itemAt(found)] = size;
    }
  }
}

/**
 * Writes a table of the known sizes without waiting for the disk: it is a cache, and a torn one
 * reads as empty. A blob named twice is written twice (cheaper than a set; reading keeps one).
 */
export async function writeSizes(
  file: string,
  index: Buffer,
  oidOffsets: ArrayLike<number>,
  sizes: Float64Array,
): Promise<void> {
  await writeFileAtomic(file, sizeRecords(index, oidOffsets, sizes, null), 0o600, false);
}

/**
 * Adds the sizes of `items` to the end of the table at `file`, if it is still there. An append
 * cut short leaves a length no table has, which reads as no table: then git is asked again.
 */
export async function appendSizes(
  file: string,
  index: Buffer,
  oidOffsets: ArrayLike<number>,
  sizes: Float64Array,
  items: readonly number[],
): Promise<void> {
  if (items.length === 0) return;
  const handle = await fs.open(file, fsConstants.O_WRONLY | fsConstants.O_APPEND);
  try {
    await handle.write(sizeRecords(index, oidOffsets, sizes, items).subarray(SIZES_MAGIC.length));
  } finally {
    await handle.close();
  }
}

/** A table of the known sizes among `items` (all of them when null). */
function sizeRecords(
  index: Buffer,
  oidOffsets: ArrayLike<number>,
  sizes: Float64Array,
  items: readonly number[] | null,
): Buffer {
  const count = items === null ? sizes.length : items.length;
  let known = 0;
  for (let k = 0; k < count; k++) if (sizes[items === null ? k : items[k]] >= 0) known++;
  const data = Buffer.allocUnsafe(SIZES_MAGIC.length + known * SIZE_RECORD);
  SIZES_MAGIC.copy(data, 0);
  let at = SIZES_MAGIC.length;
  for (let k = 0; k < count; k++) {
    const item = items === null ? k : items[k];
    if (sizes[item] < 0) continue;
    // Byte by byte and in 32-bit integers: a call to copy or writeUIntBE per record, or
    // floating-point division, cost more than the 26 bytes (this runs once per process, unoptimized).
    const from = oidOffsets[item];
    for (let i = 0; i < 20; i++) data[at + i] = index[from + i];
    const size = Math.min(sizes[item], 2 ** 48 - 1);
    const high = Math.floor(size / 2 ** 32);
    const low = size >>> 0;
    data[at + 20] = (high >>> 8) & 255;
    data[at + 21] = high & 255;
    data[at + 22] = low >>> 24;
    data[at + 23] = (low >>> 16) & 255;
    data[at + 24] = (low >>> 8) & 255;
    data[at + 25] = low & 255;
    at += SIZE_RECORD;
  }
  return data;
}

/** Asks git the size of the given objects, or of every object it has (null), into `lines`. */
export async function listSizes(
  paths: StorePaths,
  readEnv: NodeJS.ProcessEnv,
  lines: SizeLines,
  ids: string[] | null,
): Promise<void> {
  const format = "--batch-check=%(objectname) %(objecttype) %(objectsize)";
  // Git writes each answer to ids on stdin with a write of its own unless told to buffer (as it
  // does listing every object): thousands of syscalls, and as many chunks for this process.
  await runGit(
    ids === null ? ["cat-file", "--batch-all-objects", format] : ["cat-file", "--buffer", format],
    {
      cwd: paths.dir,
      env: readEnv,
      input: ids === null ? undefined : `${ids.join("\n")}\n`,
      onStdout: (chunk) => lines.feed(chunk),
    },
  );
}

/**
 * Git's "<40 hex> <type> <size>" lines, read as bytes as they arrive and matched against the
 * index's blob ids once the table of them is there (until then they wait). Lines of other types
 * and "missing" are skipped.
 */
export class SizeLines {
  private rest: Buffer | null = null;
  private waiting: Buffer[] | null = [];
  private table: OidTable | null = null;
  private sizes: Float64Array | null = null;

  feed(chunk: Buffer): void {
    if (this.waiting) this.waiting.push(chunk);
    else this.parse(chunk);
  }

  matchInto(table: OidTable, sizes: Float64Array): void {
    this.table = table;
    this.sizes = sizes;
    const waiting = this.waiting ?? [];
    this.waiting = null;
    for (const chunk of waiting) this.parse(chunk);
  }

  /** The output ended: a last line without its newline counts too. */
  end(): void {
    if (this.rest) this.line(this.rest, 0, this.rest.length);
    this.rest = null;
  }

  private parse(chunk: Buffer): void {
    const out = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    let at = 0;
    for (let end = out.indexOf(0x0a, at); end !== -1; end = out.indexOf(0x0a, at)) {
      this.line(out, at, end);
      at = end + 1;
    }
    this.rest = at < out.length ? out.subarray(at) : null;
  }

  private line(out: Buffer, at: number, end: number): void {
    // The type's first letter tells a blob ("b") from a tree, commit, tag or "missing".
    if (end - at <= 46 || out[at + 40] !== 0x20 || out[at + 41] !== 0x62) return;
    let size = 0;
    for (let i = at + 46; i < end; i++) size = size * 10 + (out[i] - 48);
    const table = this.table!;
    for (let found = table.firstWithHexId(out, at); found !== -1; found = table.nextWithSameId(found)) {
      this.sizes![table.itemAt(found)] = size;
    }
  }
}

/**
 * Whether listing every object's size beats asking for `count` blobs one by one: where they are
 * most of the objects git has (a young clone), since git then walks its pack indexes in order.
 */
export async function listingEveryObjectPays(objectsDir: string, count: number): Promise<boolean> {
  return count >= 1000 && (await packedObjectCount(objectsDir)) <= 4 * count;
}

/** How many objects the store's packs and those it borrows from hold (from each pack index's header). */
async function packedObjectCount(objectsDir: string): Promise<number> {
  const alternates = await fs.readFile(path.join(objectsDir, "info", "alternates"), "utf8").catch(() => "");
  const dirs = [objectsDir, ...alternates.split("\n").filter((line) => line.startsWith("/"))];
  let total = 0;
  for (const dir of dirs) {
    const packDir = path.join(dir, "pack");
    const names = await fs.readdir(packDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith(".idx"))) {
      const handle = await fs.open(path.join(packDir, name), "r").catch(() => null);
      if (!handle) continue;
      try {
        // Version 2: magic, version, then 256 fan-out counts; the last is the object count.
        const head = Buffer.alloc(8 + 256 * 4);
        const { bytesRead } = await handle.read(head, 0, head.length, 0);
        if (bytesRead === head.length && head.readUInt32BE(0) === 0xff744f63)
          total += head.readUInt32BE(8 + 255 * 4);
        else return Number.POSITIVE_INFINITY; // an old or unknown index: ask for each blob
      } finally {
        await handle.close();
      }
    }
  }
  return total;
}
