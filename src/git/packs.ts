import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import { crc32 } from "node:zlib";
import type { ObjectType } from "./objects.js";
import { deflateObject } from "./loose-objects.js";

/**
 * Pack files (version 2) and their indexes (version 2), in the formats git documents in
 * gitformat-pack(5): a capture that would create many loose objects writes one pack instead.
 */

export interface PackEntry {
  oid: string;
  type: ObjectType;
  content: Buffer;
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

/**
 * Encodes whole objects (no deltas) as a pack and its index. `name` is the pack's checksum in
 * hex, which git also uses to name the files (pack-<name>.pack, pack-<name>.idx).
 */
export function encodePack(entries: PackEntry[]): { pack: Buffer; index: Buffer; name: string } {
  const header = Buffer.alloc(12);
  header.write("PACK", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const parts: Buffer[] = [header];
  const placed: { oid: Buffer; offset: number; crc: number }[] = [];
  let offset = header.length;
  for (const entry of entries) {
    const record = Buffer.concat([
      entryHeader(entry.type, entry.content.length),
      deflateObject(entry.content),
    ]);
    placed.push({ oid: Buffer.from(entry.oid, "hex"), offset, crc: crc32(record) });
    parts.push(record);
    offset += record.length;
  }
  const hash = createHash("sha1");
  for (const part of parts) hash.update(part);
  const checksum = hash.digest();
  parts.push(checksum);
  if (offset >= 2 ** 31) throw new Error("pack too large for 4-byte offsets");

  placed.sort((a, b) => Buffer.compare(a.oid, b.oid));
  const count = placed.length;
  const index = Buffer.alloc(8 + 256 * 4 + count * (20 + 4 + 4) + 40);
  index.writeUInt32BE(0xff744f63, 0); // "\377tOc"
  index.writeUInt32BE(2, 4);
  let at = 8;
  let cursor = 0;
  for (let byte = 0; byte < 256; byte++) {
    while (cursor < count && placed[cursor].oid[0] <= byte) cursor++;
    index.writeUInt32BE(cursor, at);
    at += 4;
  }
  for (const p of placed) at += p.oid.copy(index, at);
  for (const p of placed) at = index.writeUInt32BE(p.crc >>> 0, at);
  for (const p of placed) at = index.writeUInt32BE(p.offset, at);
  at += checksum.copy(index, at);
  createHash("sha1").update(index.subarray(0, at)).digest().copy(index, at);
  return { pack: Buffer.concat(parts), index, name: checksum.toString("hex") };
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

  constructor(private readonly packDir: string) {}

  private load(): { pack: string; index: Buffer; count: number }[] {
    if (this.indexes) return this.indexes;
    this.indexes = [];
    let names: string[] = [];
    try {
      names = readdirSync(this.packDir);
    } catch {
      return this.indexes; // no packs yet
    }
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
    if (index.length < 8 + 1024 + 40 || index.readUInt32BE(0) !== 0xff744f63 || index.readUInt32BE(4) !== 2)
      return;
    const count = index.readUInt32BE(8 + 255 * 4);
    if (index.length < 8 + 1024 + count * 28 + 40) return;
    this.load().push({ pack, index, count });
  }

  /** The pack holding `oid`, or null. */
  find(oid: string): string | null {
    const wanted = Buffer.from(oid, "hex");
    for (const { pack, index, count } of this.load()) {
      const first = wanted[0];
      let low = first === 0 ? 0 : index.readUInt32BE(8 + (first - 1) * 4);
      let high = index.readUInt32BE(8 + first * 4);
      const names = 8 + 1024;
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
    try {
      const now = new Date();
      utimesSync(pack, now, now);
      return true;
    } catch {
      return false; // repacked meanwhile
    }
  }
}
