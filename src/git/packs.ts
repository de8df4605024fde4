import { nodeCrypto } from "../util/crypto.js";
import { readFileSync, statSync, utimesSync } from "node:fs";
import type { ObjectType } from "./objects.js";
import { deflateObject } from "./loose-objects.js";
import { namesIn } from "../util/small-files.js";
import { zlib } from "../util/zlib.js";

/**
 * Pack files (version 2) and their indexes (version 2), in the formats git documents in
 * gitformat-pack(5): a capture that would create many loose objects writes one pack instead.
 */

export interface PackEntry {
  oid: string;
  type: ObjectType;
  content: Buffer;
}

/** One object as a pack stores it: its header and deflated content, with their CRC-32. */
export interface PackRecord {
  oid: Buffer;
  bytes: Buffer;
  crc: number;
}

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };

/** An object's pack header: type and size, the size in little-endian groups of 7 bits. */
function entryHeader(type: ObjectType, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (TYPE_CODE[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

export function packRecord(entry: PackEntry): PackRecord {
  const bytes = Buffer.concat([entryHeader(entry.type, entry.content.length), deflateObject(entry.content)]);
  return { oid: Buffer.from(entry.oid, "hex"), bytes, crc: zlib().crc32(bytes) };
}

const INDEX_MAGIC = 0xff744f63; // "\377tOc"
const FANOUT_END = 8 + 256 * 4;

/**
 * Encodes whole objects (no deltas) as a pack and its index. `name` is the pack's checksum in
 * hex, which git also uses to name the files (pack-<name>.pack, pack-<name>.idx).
 */
export function encodePack(records: PackRecord[]): { pack: Buffer; index: Buffer; name: string } {
  const header = Buffer.alloc(12);
  header.write("PACK", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(records.length, 8);
  const parts: Buffer[] = [header];
  const placed: { oid: Buffer; offset: number; crc: number }[] = [];
  let offset = header.length;
  for (const record of records) {
    placed.push({ oid: record.oid, offset, crc: record.crc });
    parts.push(record.bytes);
    offset += record.bytes.length;
  }
  if (offset >= 2 ** 31) throw new Error("pack too large for 4-byte offsets");
  const hash = nodeCrypto().createHash("sha1");
  for (const part of parts) hash.update(part);
  const checksum = hash.digest();
  parts.push(checksum);

  placed.sort((a, b) => Buffer.compare(a.oid, b.oid));
  const count = placed.length;
  const index = Buffer.alloc(FANOUT_END + count * (20 + 4 + 4) + 40);
  index.writeUInt32BE(INDEX_MAGIC, 0);
  index.writeUInt32BE(2, 4);
  let at = 8;
  let cursor = 0;
  for (let byte = 0; byte < 256; byte++) {
    while (cursor < count && placed[cursor].oid[0] <= byte) cursor++;
    at = index.writeUInt32BE(cursor, at);
  }
  for (const p of placed) at += p.oid.copy(index, at);
  for (const p of placed) at = index.writeUInt32BE(p.crc >>> 0, at);
  for (const p of placed) at = index.writeUInt32BE(p.offset, at);
  at += checksum.copy(index, at);
  nodeCrypto().createHash("sha1").update(index.subarray(0, at)).digest().copy(index, at);
  return { pack: Buffer.concat(parts), index, name: checksum.toString("hex") };
}

/** How many objects a (version 2) pack index lists. */
export function packCount(index: Buffer): number {
  return index.readUInt32BE(FANOUT_END - 4);
}

/**
 * The records of a pack of whole objects, as stored (nothing inflated), for merging small packs
 * into one. Null for a pack holding deltas (git's own) or one whose index does not fit it.
 */
export function readPackRecords(pack: Buffer, index: Buffer): PackRecord[] | null {
  const count = packCount(index);
  const crcsAt = FANOUT_END + count * 20;
  const offsetsAt = crcsAt + count * 4;
  const end = pack.length - 20;
  if (pack.length < 32 || pack.toString("latin1", 0, 4) !== "PACK" || pack.readUInt32BE(8) !== count)
    return null;
  const order = Array.from({ length: count }, (_, i) => i);
  const offsetOf = (i: number) => index.readUInt32BE(offsetsAt + i * 4);
  order.sort((a, b) => offsetOf(a) - offsetOf(b));
  const records: PackRecord[] = [];
  for (let k = 0; k < count; k++) {
    const i = order[k];
    const from = offsetOf(i);
    const to = k + 1 < count ? offsetOf(order[k + 1]) : end;
    if (from & 0x80000000 || from < 12 || to > end || to <= from) return null;
    const type = (pack[from] >> 4) & 7;
    if (type < 1 || type > 3) return null; // a delta, or a tag: left to git
    const bytes = pack.subarray(from, to);
    const crc = index.readUInt32BE(crcsAt + i * 4);
    if (zlib().crc32(bytes) !== crc) return null;
    records.push({
      oid: Buffer.from(index.subarray(FANOUT_END + i * 20, FANOUT_END + i * 20 + 20)),
      bytes,
      crc,
    });
  }
  return records;
}

/** Indexes larger than this are not read to answer "is it there" (a whole store after gc). */
const LOOKUP_INDEX_BYTES = 1024 * 1024;
/** Nor more than this in all (a repository with many small fetched packs). */
const LOOKUP_TOTAL_BYTES = 4 * 1024 * 1024;

/**
 * Which of a store's own packs hold an object: the small packs captures wrote (and a small
 * store's gc pack), never the user's packs it links (marked .keep) nor a large gc pack, whose
 * index would cost more to read than rewriting a few objects loose. A miss only means the object
 * is written again.
 */
export class PackLookup {
  private indexes: { pack: string; index: Buffer; count: number }[] | null = null;
  private readonly freshened = new Set<string>();

  constructor(private readonly packDir: string) {}

  private load(): { pack: string; index: Buffer; count: number }[] {
    if (this.indexes) return this.indexes;
    this.indexes = [];
    const names = namesIn(this.packDir); // none: no packs yet
    const present = new Set(names);
    let total = 0;
    for (const name of names) {
      if (!name.endsWith(".idx")) continue;
      const base = name.slice(0, -4);
      if (present.has(`${base}.keep`) || !present.has(`${base}.pack`)) continue;
      try {
        const file = `${this.packDir}/${name}`;
        const size = statSync(file).size;
        if (size > LOOKUP_INDEX_BYTES || total + size > LOOKUP_TOTAL_BYTES) continue;
        total += size;
        this.add(`${this.packDir}/${base}.pack`, readFileSync(file));
      } catch {
        // removed meanwhile (a repack): its objects are elsewhere or written again
      }
    }
    return this.indexes;
  }

  /** Adds a pack (one this process just wrote). An index not of version 2, or cut short, is ignored. */
  add(pack: string, index: Buffer): void {
    if (
      index.length < FANOUT_END + 40 ||
      index.readUInt32BE(0) !== INDEX_MAGIC ||
      index.readUInt32BE(4) !== 2
    )
      return;
    const count = packCount(index);
    if (index.length < FANOUT_END + count * 28 + 40) return;
    this.load().push({ pack, index, count });
  }

  /** The packs looked into (the store's own small packs), each with its index. */
  packs(): readonly { pack: string; index: Buffer }[] {
    return this.load();
  }

  /** Stops looking into packs that were merged into another. */
  forget(packs: Set<string>): void {
    this.indexes = this.load().filter((p) => !packs.has(p.pack));
  }

  /** The pack holding `oid`, or null. */
  find(oid: string): string | null {
    const wanted = Buffer.from(oid, "hex");
    for (const { pack, index, count } of this.load()) {
      const first = wanted[0];
      let low = first === 0 ? 0 : index.readUInt32BE(8 + (first - 1) * 4);
      let high = index.readUInt32BE(8 + first * 4);
      const names = FANOUT_END;
      if (high > count) continue; // damaged
      while (low < high) {
        const middle = (low + high) >>> 1;
        const order = Buffer.compare(index.subarray(names + middle * 20, names + middle * 20 + 20), wanted);
        if (order === 0) return pack;
        if (order < 0) low = middle + 1;
        else high = middle;
      }
    }
    return null;
  }

  /**
   * True if a pack here holds `oid`; touches that pack, as git freshens a packed object, so a
   * concurrent gc that spares recent objects spares it.
   */
  freshen(oid: string): boolean {
    const pack = this.find(oid);
    if (!pack) return false;
    // Once per pack, as git does: a later snapshot finds dozens of its trees in one pack.
    if (this.freshened.has(pack)) return true;
    try {
      const now = new Date();
      utimesSync(pack, now, now);
      this.freshened.add(pack);
      return true;
    } catch {
      return false; // repacked meanwhile
    }
  }
}
