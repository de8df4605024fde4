import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";

const HEADER = 12;
export const SHA1_BYTES = 20;
const FLAG_EXTENDED = 0x4000;
const STAGE_MASK = 0x3000;
const NAME_MASK = 0xfff;
const EXT_SKIP_WORKTREE = 0x4000;
export const EXT_INTENT_TO_ADD = 0x2000;
export const MODE_DIRECTORY = 0o040000;

type IndexReader = { size: number; read: (length: number, position: number) => Promise<Buffer> };

/** Runs `work` on an open index file; null when the file cannot be opened. */
async function withIndex<T>(file: string, work: (index: IndexReader) => Promise<T>): Promise<T | null> {
  const handle = await fs.open(file, "r").catch(() => null);
  if (!handle) return null;
  try {
    const { size } = await handle.stat();
    return await work({
      size,
      read: async (length, position) => {
        const bytes = Buffer.allocUnsafe(length); // only what was read is handed out
        const { bytesRead } = await handle.read(bytes, 0, length, position);
        return bytes.subarray(0, bytesRead);
      },
    });
  } finally {
    await handle.close();
  }
}

/**
 * Whether the repository whose git directory is `gitDir` splits its index (`core.splitIndex`):
 * most entries then live in a shared file that only git reads.
 */
export async function usesSplitIndex(gitDir: string): Promise<boolean> {
  const names = await fs.readdir(gitDir).catch(() => [] as string[]);
  return names.some((name) => name.startsWith("sharedindex."));
}

/** How many entries the index holds (from its header), or null when it is missing or not an index. */
export async function indexEntryCount(file: string): Promise<number | null> {
  return withIndex(file, async ({ read }) => {
    const header = await read(HEADER, 0);
    return header.length === HEADER && header.toString("latin1", 0, 4) === "DIRC"
      ? header.readUInt32BE(8)
      : null;
  });
}

/** The trailing checksum (hex), or null when the file is too short to be an index. */
async function checksumOf({ size, read }: IndexReader): Promise<string | null> {
  return size < HEADER + SHA1_BYTES ? null : (await read(SHA1_BYTES, size - SHA1_BYTES)).toString("hex");
}

/** The index's trailing checksum (hex), or null when the file is missing or too short. */
export async function indexChecksum(file: string): Promise<string | null> {
  return withIndex(file, checksumOf);
}

/** An index's digest (see `indexEntriesDigest`), with its bytes where they were read whole for it. */
export interface EntriesDigest {
  digest: string;
  /** The whole file, when the digest is of its entries: made from these very bytes. */
  data: Buffer | null;
}

/**
 * A digest of the index's header and entries only, or (without an "EOIE" extension, which git
 * writes with `index.recordEndOfIndexEntries`) its checksum; null when it is missing. Git
 * rewrites a status index's cache extensions on every run; its entries change only when an entry
 * does, which is what a cache of conclusions about the entries must follow. To digest the
 * entries the whole file is read, and handed back: a caller that goes on to read the index uses
 * these bytes, as 10 MB of fresh memory costs about as much to fill as to read.
 */
export async function indexEntriesDigest(file: string): Promise<EntriesDigest | null> {
  return withIndex(file, entriesDigest);
}

async function entriesDigest(index: IndexReader): Promise<EntriesDigest | null> {
  const { size, read } = index;
  const eoieBytes = 8 + 4 + SHA1_BYTES; // signature, length, where the extensions start, hash
  const checksum = async () => {
    const digest = await checksumOf(index);
    return digest === null ? null : { digest, data: null };
  };
  if (size < HEADER + eoieBytes + SHA1_BYTES) return checksum();
  const tail = await read(eoieBytes + SHA1_BYTES, size - SHA1_BYTES - eoieBytes);
  const end = tail.readUInt32BE(8);
  if (tail.toString("latin1", 0, 4) !== "EOIE" || tail.readUInt32BE(4) !== 4 + SHA1_BYTES || end > size) {
    return { digest: tail.subarray(eoieBytes).toString("hex"), data: null }; // the file's checksum
  }
  const data = await read(size, 0);
  if (data.length < size) return checksum(); // cut short while being read: replaced since
  return { digest: `entries:${createHash("sha1").update(data.subarray(0, end)).digest("hex")}`, data };
}

/** A big-endian 32-bit field, read by hand: the checked Buffer readers cost more than the rest of a cold walk. */
function uint32At(data: Buffer, at: number): number {
  return ((data[at] << 24) | (data[at + 1] << 16) | (data[at + 2] << 8) | data[at + 3]) >>> 0;
}

/** One raw index entry as `walkIndex` sees it; valid only during the callback. */
export interface RawEntry {
  offset: number;
  mode: number;
  stage: number;
  extended: number;
  /** The path's bytes are `names[nameStart, nameEnd)` (the index itself, or for version 4 a rebuilt copy). */
  names: Buffer;
  nameStart: number;
  nameEnd: number;
}

/**
 * Walks every entry of a SHA-1 index (versions 2 to 4) without copying (version 4's
 * prefix-compressed names aside). Returns the offset where the extensions begin, or null for
 * anything not understood (another version or hash, damage).
 */
export function walkIndex(data: Buffer, each: (entry: RawEntry) => void): number | null {
  if (data.length < HEADER + SHA1_BYTES || data.toString("latin1", 0, 4) !== "DIRC") return null;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = data.readUInt32BE(8);
  const end = data.length - SHA1_BYTES;
  const entry: RawEntry = {
    offset: 0,
    mode: 0,
    stage: 0,
    extended: 0,
    names: data,
    nameStart: 0,
    nameEnd: 0,
  };
  let previous: Buffer = Buffer.alloc(0);
  let offset = HEADER;
  for (let i = 0; i < count; i++) {
    if (offset + 62 > end) return null;
    entry.offset = offset;
    entry.mode = uint32At(data, offset + 24);
    const flags = (data[offset + 60] << 8) | data[offset + 61];
    entry.stage = (flags >> 12) & 3;
    let cursor = offset + 62;
    entry.extended = 0;
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return null;
      entry.extended = (data[cursor] << 8) | data[cursor + 1];
      cursor += 2;
    }
    if (version === 4) {
      // The name is the previous one minus `strip` trailing bytes, plus a NUL-terminated suffix.
      let byte = data[cursor++];
      let strip = byte & 0x7f;
      while (byte & 0x80) {
        byte = data[cursor++];
        strip = ((strip + 1) << 7) | (byte & 0x7f);
      }
      const nul = data.indexOf(0, cursor);
      if (nul === -1 || nul >= end || strip > previous.length) return null;
      previous = Buffer.concat([previous.subarray(0, previous.length - strip), data.subarray(cursor, nul)]);
      entry.names = previous;
      entry.nameStart = 0;
      entry.nameEnd = previous.length;
      offset = nul + 1;
    } else {
      // The flags hold the name's length below 4095; a longer name is found by its NUL.
      const length = flags & NAME_MASK;
      const nul = length < NAME_MASK ? cursor + length : data.indexOf(0, cursor);
      if (nul === -1 || nul >= end || data[nul] !== 0) return null;
      entry.nameStart = cursor;
      entry.nameEnd = nul;
      // Entries are NUL-padded to a multiple of 8 bytes.
      offset += (cursor - offset + (nul - cursor) + 8) & ~7;
    }
    each(entry);
  }
  return offset;
}

/** The index's extensions by signature (offsets of their bodies), or null when they do not add up. */
export function indexExtensions(data: Buffer, from: number): Map<string, [number, number]> | null {
  const end = data.length - SHA1_BYTES;
  const found = new Map<string, [number, number]>();
  let at = from;
  while (at + 8 <= end) {
    const length = data.readUInt32BE(at + 4);
    if (at + 8 + length > end) return null;
    found.set(data.toString("latin1", at, at + 4), [at + 8, at + 8 + length]);
    at += 8 + length;
  }
  return at === end ? found : null;
}

/** The regular files an index checks out, as `indexRegularFiles` finds them. */
export interface IndexRegularFiles {
  /** How many; each array below holds that many items. */
  count: number;
  /** Where each one's blob id (20 bytes) is in the index data. */
  oidOffsets: Int32Array;
  /** Each one's work-tree size when its entry was written, modulo 2^32 (git's `sd_size`). */
  statSizes: Uint32Array;
  /** Each one's position among all the index's entries (see `indexPathsAt`). */
  positions: Int32Array;
  /** Where the entries end (the extensions begin). */
  entriesEnd: number;
}

/**
 * The checked-out, stage-0 regular files of a SHA-1 index (versions 2 to 4): no symlinks,
 * submodules or sparse directories, no skip-worktree or intent-to-add entries. Null for anything
 * not fully understood (a split index, another hash, damage), so the caller falls back to the
 * slow path instead of trusting a guess. One loop into typed arrays, no call per entry: this
 * runs over 100k entries once in a process, unoptimized, where a callback per entry and
 * growing arrays cost twice as much (~60 against ~30 ms).
 */
export function indexRegularFiles(data: Buffer): IndexRegularFiles | null {
  if (data.length < HEADER + SHA1_BYTES || data.toString("latin1", 0, 4) !== "DIRC") return null;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = data.readUInt32BE(8);
  const end = data.length - SHA1_BYTES;
  if (count > (end - HEADER) / 62) return null; // an entry takes at least 62 bytes
  const oidOffsets = new Int32Array(count);
  const statSizes = new Uint32Array(count);
  const positions = new Int32Array(count);
  let files = 0;
  let offset = HEADER;
  let nameLength = 0; // version 4: the previous entry's
  for (let i = 0; i < count; i++) {
    if (offset + 62 > end) return null;
    const flags = (data[offset + 60] << 8) | data[offset + 61];
    let cursor = offset + 62;
    let extended = 0;
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return null;
      extended = (data[cursor] << 8) | data[cursor + 1];
      cursor += 2;
    }
    let next: number;
    if (version === 4) {
      // The previous name minus `strip` trailing bytes, plus a NUL-terminated suffix: only its
      // length is followed here, since no path is needed.
      let byte = data[cursor++];
      let strip = byte & 0x7f;
      while (byte & 0x80) {
        byte = data[cursor++];
        strip = ((strip + 1) << 7) | (byte & 0x7f);
      }
      const nul = data.indexOf(0, cursor);
      if (nul === -1 || nul >= end || strip > nameLength) return null;
      nameLength = nameLength - strip + (nul - cursor);
      next = nul + 1;
    } else {
      const length = flags & NAME_MASK;
      const nul = length < NAME_MASK ? cursor + length : data.indexOf(0, cursor);
      if (nul === -1 || nul >= end || data[nul] !== 0) return null;
      next = offset + ((nul - offset + 8) & ~7); // NUL-padded to a multiple of 8 bytes
    }
    // The mode's type bits (0o170000) are the high half of its third byte: 0o100000, a file.
    if (
      (data[offset + 26] & 0xf0) === 0x80 &&
      (flags & STAGE_MASK) === 0 &&
      (extended & (EXT_SKIP_WORKTREE | EXT_INTENT_TO_ADD)) === 0
    ) {
      oidOffsets[files] = offset + 40;
      statSizes[files] = uint32At(data, offset + 36);
      positions[files] = i;
      files++;
    }
    offset = next;
  }
  // A split index keeps most entries in a shared file: not understood here.
  const extensions = indexExtensions(data, offset);
  if (extensions === null || extensions.has("link")) return null;
  return {
    count: files,
    oidOffsets: oidOffsets.subarray(0, files),
    statSizes: statSizes.subarray(0, files),
    positions: positions.subarray(0, files),
    entriesEnd: offset,
  };
}

/** The paths (one char per byte) of the entries at these positions, in index order. */
export function indexPathsAt(data: Buffer, positions: ReadonlySet<number>): string[] {
  const paths: string[] = [];
  let position = 0;
  walkIndex(data, (raw) => {
    if (positions.has(position++)) paths.push(raw.names.toString("latin1", raw.nameStart, raw.nameEnd));
  });
  return paths;
}

/**
 * `indexEntriesDigest` of an index read whole and walked (`entriesEnd` from `indexRegularFiles`):
 * the digest of its header and entries whether or not git recorded where they end.
 */
export function entriesDigestOfWalked(data: Buffer, entriesEnd: number): string {
  return `entries:${createHash("sha1").update(data.subarray(0, entriesEnd)).digest("hex")}`;
}
