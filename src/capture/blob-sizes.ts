import { constants as fsConstants, promises as fs } from "node:fs";
import { runGit } from "../git/exec.js";
import type { OidTable } from "../git/oid-table.js";
import { type StorePaths, writeFileAtomic } from "../store/layout.js";

/**
 * Blob sizes for the clean proof: the store's table of those already known (a blob's size never
 * changes), matched against the index by the ids' bytes, and git's answers for the rest.
 *
 * The table is a header, then segments, each written whole: its record count (32 bits, then 32
 * zero bits), the blob ids (20 bytes each), zeros up to a multiple of 8, then each blob's size as
 * a little-endian double (-1: not known). Ids and sizes in blocks, as the index walk and the proof
 * hold them: writing 100k sizes is then one write of the blocks as they are, where a 26-byte
 * record per blob built in code that runs once per process (unoptimized), then joined, cost a
 * first snapshot ~35 ms after git answered.
 */
const SIZES_MAGIC = Buffer.from("ghostcommit blob sizes 2, f64le\n");
const SEGMENT_HEADER = 8;

/** Where each segment's ids and sizes start, or null for bytes that are no whole table. */
function segmentsOf(data: Buffer): { count: number; idsAt: number; sizesAt: number }[] | null {
  if (data.length < SIZES_MAGIC.length || !data.subarray(0, SIZES_MAGIC.length).equals(SIZES_MAGIC))
    return null;
  const segments = [];
  for (let at = SIZES_MAGIC.length; at < data.length; ) {
    if (data.length - at < SEGMENT_HEADER) return null;
    const count = data.readUInt32LE(at);
    const idsAt = at + SEGMENT_HEADER;
    const sizesAt = idsAt + idBlockBytes(count);
    at = sizesAt + count * 8;
    if (at > data.length) return null; // an append cut short
    segments.push({ count, idsAt, sizesAt });
  }
  return segments;
}

/** The ids' block of a segment, padded so that its sizes start 8-byte aligned. */
function idBlockBytes(count: number): number {
  return Math.ceil((count * 20) / 8) * 8;
}

/** Whether `data` is a table this version wrote: a damaged or older one counts as none. */
export function isSizeTable(data: Buffer | null): data is Buffer {
  return data !== null && segmentsOf(data) !== null;
}

/** How many records a table holds (one blob may be in several). */
export function sizeTableRecords(data: Buffer): number {
  return (segmentsOf(data) ?? []).reduce((sum, segment) => sum + segment.count, 0);
}

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** `count` doubles stored little-endian at `at` in `data`, as numbers (copied where they must be). */
function doublesAt(data: Buffer, at: number, count: number): Float64Array {
  const bytes = data.subarray(at, at + count * 8);
  if (LITTLE_ENDIAN && bytes.byteOffset % 8 === 0)
    return new Float64Array(bytes.buffer, bytes.byteOffset, count);
  const copy = Buffer.from(bytes);
  if (!LITTLE_ENDIAN) copy.swap64();
  return new Float64Array(copy.buffer, copy.byteOffset, count);
}

/** Numbers as little-endian doubles. */
function doubleBytes(values: Float64Array): Buffer {
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.length * 8);
  return LITTLE_ENDIAN ? bytes : Buffer.from(bytes).swap64();
}

/** Puts the cached table's sizes on the items whose blob it names (a blob's size never changes). */
export function applySizeTable(data: Buffer, table: OidTable, proof: ProvenSizes): void {
  for (const { count, idsAt, sizesAt } of segmentsOf(data) ?? []) {
    const sizes = doublesAt(data, sizesAt, count);
    for (let k = 0; k < count; k++) {
      const size = sizes[k];
      if (!(size >= 0)) continue;
      for (
        let found = table.firstWithId(data, idsAt + k * 20);
        found !== -1;
        found = table.nextWithSameId(found)
      ) {
        proof.land(table.itemAt(found), size);
      }
    }
  }
}

/** One segment: the items' ids and sizes (all of them when `items` is null). */
function segment(ids: Buffer, sizes: Float64Array, items: ArrayLike<number> | null): Buffer[] {
  const count = items === null ? sizes.length : items.length;
  const header = Buffer.alloc(SEGMENT_HEADER);
  header.writeUInt32LE(count, 0);
  if (items === null) {
    // As they are, written together: no copy.
    const pad = Buffer.alloc(idBlockBytes(count) - count * 20);
    return [header, ids.subarray(0, count * 20), pad, doubleBytes(sizes)];
  }
  // A few items (those git was just asked): gathered one by one.
  const idBlock = Buffer.alloc(idBlockBytes(count));
  const gathered = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    ids.copy(idBlock, k * 20, items[k] * 20, items[k] * 20 + 20);
    gathered[k] = sizes[items[k]];
  }
  return [header, idBlock, doubleBytes(gathered)];
}

/**
 * Writes a table of the sizes of every item (item i's id is at i × 20 in `ids`) without waiting
 * for the disk: it is a cache, and a torn one reads as empty.
 */
export async function writeSizes(file: string, ids: Buffer, sizes: Float64Array): Promise<void> {
  await writeFileAtomic(file, [SIZES_MAGIC, ...segment(ids, sizes, null)], 0o600, false);
}

/**
 * Adds the sizes of `items` to the end of the table at `file`, if it is still there. An append
 * cut short leaves a segment that runs past the end, which reads as no table: then git is asked
 * again.
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
    await handle.write(Buffer.concat(segment(ids, sizes, items)));
  } finally {
    await handle.close();
  }
}

/** Beyond this, git's index keeps a file's size modulo 2^32: no proof by size. */
const SIZE_WRAP = 2 ** 32;

/**
 * The blob sizes of an index's regular files as they become known, each checked on arrival
 * against the size the index recorded for the file: so the items left unproven are known once the
 * last size lands, with no pass over all of them after (one that ran unoptimized, ~10 ms).
 */
export class ProvenSizes {
  /** Each item's blob size, -1 while unknown. */
  readonly sizes: Float64Array;
  /** The items whose size differs from the recorded one or cannot be known (may repeat). */
  readonly unproven: number[] = [];

  constructor(private readonly statSizes: Uint32Array) {
    this.sizes = new Float64Array(statSizes.length).fill(-1);
  }

  land(item: number, size: number): void {
    this.sizes[item] = size;
    if (size < 0 || size >= SIZE_WRAP || size !== this.statSizes[item]) this.unproven.push(item);
  }

  /** Git's answers for `items` cannot be trusted: their sizes are unknown. */
  distrust(items: ArrayLike<number> | null): void {
    const count = items === null ? this.sizes.length : items.length;
    for (let k = 0; k < count; k++) this.land(items === null ? k : items[k], -1);
  }
}

/**
 * Git's `--batch-check=%(objectsize)` answers, one line per object asked, in the order asked:
 * the size, or "<id> missing" (or anything but a number), which leaves it unknown (-1). Each
 * lands on its item as it comes (`items` null: the k-th item is k).
 */
export class SizeAnswers {
  /** How many lines have come (more than asked, and none is to be trusted). */
  count = 0;
  private size = 0;
  private digits = 0;
  private onlyDigits = true;

  constructor(
    private readonly proof: ProvenSizes,
    private readonly items: ArrayLike<number> | null,
    private readonly asked: number,
  ) {}

  feed(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === 0x0a) {
        if (this.count < this.asked) {
          const item = this.items === null ? this.count : this.items[this.count];
          this.proof.land(item, this.onlyDigits && this.digits > 0 ? this.size : -1);
        }
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
 * Asks git the sizes of the blobs of `items` (item i's id is the 20 bytes at i × 20 in `ids`;
 * null: every item) and lands each on `proof`; one git cannot answer is unknown. Git answers in
 * the order asked, so an answer is the size alone and needs no lookup by id. Buffered
 * (`--buffer`), git looks up 100k ids in about the time it takes to list every object of a young
 * clone.
 */
export async function askSizes(
  paths: StorePaths,
  readEnv: NodeJS.ProcessEnv,
  ids: Buffer,
  items: ArrayLike<number> | null,
  proof: ProvenSizes,
): Promise<void> {
  const asked = items === null ? proof.sizes.length : items.length;
  if (asked === 0) return;
  // The ids go in chunks written into one small buffer, each once git has taken the one before:
  // 4 MB of fresh memory for 100k ids cost more to touch than to fill. Byte by byte from a table
  // of hex pairs: a string per id costs more.
  const perChunk = Math.min(asked, ASKED_PER_CHUNK);
  const chunk = Buffer.allocUnsafe(perChunk * 41);
  let next = 0;
  const input = (): Buffer | null => {
    if (next === asked) return null;
    const until = Math.min(asked, next + perChunk);
    let at = 0;
    for (; next < until; next++) {
      const from = (items === null ? next : items[next]) * 20;
      for (let i = 0; i < 20; i++, at += 2) {
        const pair = 2 * ids[from + i];
        chunk[at] = HEX_PAIRS[pair];
        chunk[at + 1] = HEX_PAIRS[pair + 1];
      }
      chunk[at++] = 0x0a;
    }
    return chunk.subarray(0, at);
  };
  const answers = new SizeAnswers(proof, items, asked);
  await runGit(["cat-file", "--buffer", "--batch-check=%(objectsize)"], {
    cwd: paths.dir,
    env: readEnv,
    input,
    onStdout: (data) => answers.feed(data),
  });
  if (answers.count !== asked) proof.distrust(items); // not one answer each: none is trusted
}
