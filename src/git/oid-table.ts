import { SHA1_BYTES } from "./index-file.js";

/**
 * Items keyed by binary object ids that lie in one buffer (an index's entries), found by an id
 * given as bytes or as hex without making a string per id: a proof over 100k index entries
 * would otherwise spend most of its time building and hashing hex strings. Open addressing on
 * the id's first bytes (ids are uniformly spread); items with the same id are chained.
 */
export class OidTable {
  private readonly slots: Int32Array;
  private readonly next: Int32Array;
  private readonly mask: number;
  private readonly scratch = Buffer.alloc(SHA1_BYTES);

  /** `offsets[i]`: where item i's id starts in `data`. */
  constructor(
    private readonly data: Buffer,
    private readonly offsets: readonly number[],
  ) {
    let size = 1024;
    while (size < offsets.length * 2) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size).fill(-1);
    this.next = new Int32Array(offsets.length).fill(-1);
    for (let item = 0; item < offsets.length; item++) {
      const slot = this.slotOf(data, offsets[item]);
      const head = this.slots[slot];
      if (head === -1) this.slots[slot] = item;
      else {
        this.next[item] = this.next[head];
        this.next[head] = item;
      }
    }
  }

  /**
   * The first item whose id is the 20 bytes at `at` in `buffer`, or -1; `nextWithSameId` gives
   * the others.
   */
  firstWithId(buffer: Buffer, at: number): number {
    const slot = this.findSlot(buffer, at);
    return slot === -1 ? -1 : this.slots[slot];
  }

  /** The same for an id written as 40 hex digits at `at` (-1 also when they are not hex). */
  firstWithHexId(text: Buffer, at: number): number {
    const scratch = this.scratch;
    for (let i = 0; i < SHA1_BYTES; i++) {
      const high = nibble(text[at + 2 * i]);
      const low = nibble(text[at + 2 * i + 1]);
      if (high < 0 || low < 0) return -1;
      scratch[i] = (high << 4) | low;
    }
    return this.firstWithId(scratch, 0);
  }

  /** The next item with the same id as `item`, or -1. */
  nextWithSameId(item: number): number {
    return this.next[item];
  }

  /** The slot holding the chain of this id, or -1. */
  private findSlot(buffer: Buffer, at: number): number {
    for (let slot = this.slotOf(buffer, at); ; slot = (slot + 1) & this.mask) {
      const item = this.slots[slot];
      if (item === -1) return -1;
      if (sameId(this.data, this.offsets[item], buffer, at)) return slot;
    }
  }

  /** Where an id's chain starts: its own slot, or the first free one after it. */
  private slotOf(buffer: Buffer, at: number): number {
    for (let slot = buffer.readUInt32BE(at) & this.mask; ; slot = (slot + 1) & this.mask) {
      const item = this.slots[slot];
      if (item === -1 || sameId(this.data, this.offsets[item], buffer, at)) return slot;
    }
  }
}

function sameId(a: Buffer, aAt: number, b: Buffer, bAt: number): boolean {
  for (let i = 0; i < SHA1_BYTES; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

/** A hex digit's value, or -1. */
function nibble(char: number): number {
  if (char >= 48 && char <= 57) return char - 48;
  const lower = char | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}
