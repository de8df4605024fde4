import { constants as fsConstants, promises as fs } from "node:fs";
import { runGit } from "../git/exec.js";
import type { OidTable } from "../git/oid-table.js";
import { type StorePaths, writeFileAtomic } from "../store/layout.js";

/**
 * Blob sizes for the clean proof: the store's table of those already known (a blob's size never
 * changes), matched against the index by the ids' bytes, and git's answers for the rest.
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
export async function writeSizes(file: string, ids: Buffer, sizes: Float64Array): Promise<void> {
  await writeFileAtomic(file, sizeRecords(ids, sizes, null), 0o600, false);
}

/**
 * Adds the sizes of `items` to the end of the table at `file`, if it is still there. An append
 * cut short leaves a length no table has, which reads as no table: then git is asked again.
 */
export async function appendSizes(
  file: string,
  ids: Buffer,
  sizes: Float64Array,
  items: ArrayLike<number>,
): Promise<void> {
  if (items.length === 0) return;
  const handle = await fs.open(file, fsConstants.O_WRONLY | fsConstants.O_APPEND);
  try {
    await handle.write(sizeRecords(ids, sizes, items).subarray(SIZES_MAGIC.length));
  } finally {
    await handle.close();
  }
}

/** A table of the known sizes among `items` (all of them when null); item i's id is at i × 20 in `ids`. */
function sizeRecords(ids: Buffer, sizes: Float64Array, items: ArrayLike<number> | null): Buffer {
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
    const from = item * 20;
    for (let i = 0; i < 20; i++) data[at + i] = ids[from + i];
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

/**
 * Git's `--batch-check=%(objectsize)` answers, one line per object asked, in the order asked:
 * the size, or "<id> missing" (or anything but a number), which leaves it unknown (-1).
 */
export class SizeAnswers {
  /** How many lines have come (more than asked, and none is to be trusted). */
  count = 0;
  private readonly known: Float64Array;
  private size = 0;
  private digits = 0;
  private onlyDigits = true;

  constructor(asked: number) {
    this.known = new Float64Array(asked);
  }

  /** The k-th answer, or -1. */
  sizeAt(k: number): number {
    return k < this.count && k < this.known.length ? this.known[k] : -1;
  }

  feed(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === 0x0a) {
        if (this.count < this.known.length)
          this.known[this.count] = this.onlyDigits && this.digits > 0 ? this.size : -1;
        this.count++;
        this.size = 0;
        this.digits = 0;
        this.onlyDigits = true;
      } else if (byte >= 0x30 && byte <= 0x39) {
        this.size = this.size * 10 + (byte - 0x30);
        this.digits++;
      } else {
        this.onlyDigits = false;
      }
    }
  }
}

/** Ids asked of git per write (41 bytes each). */
const ASKED_PER_CHUNK = 4096;

const HEX_PAIRS = (() => {
  const digits = Buffer.from("0123456789abcdef");
  const pairs = new Uint8Array(512);
  for (let byte = 0; byte < 256; byte++) {
    pairs[2 * byte] = digits[byte >> 4];
    pairs[2 * byte + 1] = digits[byte & 15];
  }
  return pairs;
})();

/**
 * Asks git the sizes of the blobs of `items` (item i's id is the 20 bytes at i × 20 in `ids`)
 * and puts each in `sizes[item]`; one git cannot answer stays -1. Git answers in the
 * order asked, so an answer is the size alone and needs no lookup by id. Buffered (`--buffer`),
 * git looks up 100k ids in about the time it takes to list every object of a young clone.
 */
export async function askSizes(
  paths: StorePaths,
  readEnv: NodeJS.ProcessEnv,
  ids: Buffer,
  items: ArrayLike<number>,
  sizes: Float64Array,
): Promise<void> {
  if (items.length === 0) return;
  // The ids go in chunks written into one small buffer, each once git has taken the one before:
  // 4 MB of fresh memory for 100k ids cost more to touch than to fill. Byte by byte from a table
  // of hex pairs: a string per id costs more.
  const perChunk = Math.min(items.length, ASKED_PER_CHUNK);
  const chunk = Buffer.allocUnsafe(perChunk * 41);
  let next = 0;
  const input = (): Buffer | null => {
    if (next === items.length) return null;
    const until = Math.min(items.length, next + perChunk);
    let at = 0;
    for (; next < until; next++) {
      const from = items[next] * 20;
      for (let i = 0; i < 20; i++, at += 2) {
        const pair = 2 * ids[from + i];
        chunk[at] = HEX_PAIRS[pair];
        chunk[at + 1] = HEX_PAIRS[pair + 1];
      }
      chunk[at++] = 0x0a;
    }
    return chunk.subarray(0, at);
  };
  const answers = new SizeAnswers(items.length);
  await runGit(["cat-file", "--buffer", "--batch-check=%(objectsize)"], {
    cwd: paths.dir,
    env: readEnv,
    input,
    onStdout: (data) => answers.feed(data),
  });
  if (answers.count !== items.length) return; // not one answer each: none is trusted
  for (let k = 0; k < items.length; k++) sizes[items[k]] = answers.sizeAt(k);
}
