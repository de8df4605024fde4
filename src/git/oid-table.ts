import { SHA1_BYTES } from "./index-entries.js";

/**
 * Items keyed by binary object ids (item i's id: the 20 bytes at i × 20 of one buffer), found by
 * an id given as bytes without making a string per id: matching a kept table of 100k blob sizes
 * against an index would otherwise spend most of its time building and hashing hex strings. The
 * ids are copied, sorted into buckets by their first two bytes, into one compact buffer. A
 * position names one item; items with the same id are next to each other.
 */
export class OidTable {
  /** Where each bucket's positions start; bucket k ends where k + 1 starts. */
  private readonly bucketStart = new Int32Array(BUCKETS + 1);
  /** The item at each position. */
  private readonly items: Int32Array;
  /** The ids, 20 bytes per position. */
  private readonly ids: Buffer;

  constructor(data: Buffer) {
    const count = Math.floor(data.length / SHA1_BYTES);
    const start = this.bucketStart;
    for (let item = 0; item < count; item++) start[bucketOf(data, item * SHA1_BYTES) + 1]++;
    for (let bucket = 0; bucket < BUCKETS; bucket++) start[bucket + 1] += start[bucket];
    const fill = start.slice(0, BUCKETS);
    this.items = new Int32Array(count);
    this.ids = Buffer.allocUnsafe(count * SHA1_BYTES);
    for (let item = 0; item < count; item++) {
      const from = item * SHA1_BYTES;
      const position = fill[bucketOf(data, from)]++;
      this.items[position] = item;
      // Byte by byte: Buffer.copy is a native call, costly 100k times over 20 bytes.
      const to = position * SHA1_BYTES;
      for (let i = 0; i < SHA1_BYTES; i++) this.ids[to + i] = data[from + i];
    }
  }

  /** The first position whose id is the 20 bytes at `at` in `buffer`, or -1. */
  firstWithId(buffer: Buffer, at: number): number {
    const bucket = bucketOf(buffer, at);
    for (let position = this.bucketStart[bucket]; position < this.bucketStart[bucket + 1]; position++) {
      if (this.idAt(position, buffer, at)) return position;
    }
    return -1;
  }

  /** The next position with the same id as `position`, or -1. */
  nextWithSameId(position: number): number {
    const next = position + 1;
    const bucket = bucketOf(this.ids, position * SHA1_BYTES);
    for (let candidate = next; candidate < this.bucketStart[bucket + 1]; candidate++) {
      if (this.idAt(candidate, this.ids, position * SHA1_BYTES)) return candidate;
    }
    return -1;
  }

  /** The item at a position. */
  itemAt(position: number): number {
    return this.items[position];
  }

  private idAt(position: number, buffer: Buffer, at: number): boolean {
    const ids = this.ids;
    const from = position * SHA1_BYTES;
    for (let i = 0; i < SHA1_BYTES; i++) if (ids[from + i] !== buffer[at + i]) return false;
    return true;
  }
}

const BUCKETS = 65536;

function bucketOf(buffer: Buffer, at: number): number {
  return (buffer[at] << 8) | buffer[at + 1];
}
