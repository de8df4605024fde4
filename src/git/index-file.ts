import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";

const HEADER = 12;
export const SHA1_BYTES = 20;
const FLAG_EXTENDED = 0x4000;
const NAME_MASK = 0xfff;
const EXT_SKIP_WORKTREE = 0x4000;
export const EXT_INTENT_TO_ADD = 0x2000;
export const MODE_DIRECTORY = 0o040000;
const MODE_GITLINK = 0o160000;

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
        const bytes = Buffer.alloc(length);
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

/**
 * A digest of the index's header and entries only, or (without an "EOIE" extension, which git
 * writes with `index.recordEndOfIndexEntries`) its checksum; null when it is missing. Git
 * rewrites a status index's cache extensions on every run; its entries change only when an entry
 * does, which is what a cache of conclusions about the entries must follow.
 */
export async function indexEntriesDigest(file: string): Promise<string | null> {
  return withIndex(file, entriesDigest);
}

async function entriesDigest(index: IndexReader): Promise<string | null> {
  const { size, read } = index;
  const eoieBytes = 8 + 4 + SHA1_BYTES; // signature, length, where the extensions start, hash
  if (size < HEADER + eoieBytes + SHA1_BYTES) return checksumOf(index);
  const tail = await read(eoieBytes + SHA1_BYTES, size - SHA1_BYTES - eoieBytes);
  const end = tail.readUInt32BE(8);
  if (tail.toString("latin1", 0, 4) !== "EOIE" || tail.readUInt32BE(4) !== 4 + SHA1_BYTES || end > size) {
    return tail.subarray(eoieBytes).toString("hex"); // the file's checksum
  }
  return `entries:${createHash("sha1")
    .update(await read(end, 0))
    .digest("hex")}`;
}

/** One checked-out, stage-0 file entry as `visitIndexFiles` sees it, without copying anything. */
export interface IndexFileVisit {
  mode: number;
  /** The work-tree file's size when the entry was written, modulo 2^32 (git's `sd_size`). */
  statSize: number;
  /** Where the blob id's 20 bytes are in the index data. */
  oidOffset: number;
  /** The blob id, hex. */
  oid: () => string;
  /** The path, one char per byte. */
  path: () => string;
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

/**
 * Visits the checked-out, stage-0 file entries of a SHA-1 index (versions 2 to 4), leaving out
 * submodules, sparse directories, skip-worktree and intent-to-add entries. Returns where the
 * entries end (the extensions begin), or null for anything it does not fully understand (a split
 * index, another hash, damage), so the caller falls back to the slow path instead of trusting a
 * guess (only once every entry was visited: the visitor's findings are then to be thrown away).
 * Nothing is allocated for an entry unless the visitor asks for its id or path: 100k entries are
 * walked in milliseconds.
 */
export function visitIndexFiles(data: Buffer, visit: (entry: IndexFileVisit) => void): number | null {
  let current: RawEntry | null = null;
  const entry: IndexFileVisit = {
    mode: 0,
    statSize: 0,
    oidOffset: 0,
    oid: () => data.toString("hex", current!.offset + 40, current!.offset + 40 + SHA1_BYTES),
    path: () => current!.names.toString("latin1", current!.nameStart, current!.nameEnd),
  };
  const extensionsAt = walkIndex(data, (raw) => {
    const kind = raw.mode & 0o170000;
    if (
      raw.stage !== 0 ||
      kind === MODE_DIRECTORY ||
      kind === MODE_GITLINK ||
      raw.extended & (EXT_SKIP_WORKTREE | EXT_INTENT_TO_ADD)
    ) {
      return;
    }
    current = raw;
    entry.mode = raw.mode;
    entry.statSize = uint32At(data, raw.offset + 36);
    entry.oidOffset = raw.offset + 40;
    visit(entry);
  });
  if (extensionsAt === null) return null;
  // A split index keeps most entries in a shared file: not understood here (what was visited
  // must then be thrown away).
  const extensions = indexExtensions(data, extensionsAt);
  return extensions !== null && !extensions.has("link") ? extensionsAt : null;
}

/**
 * `indexEntriesDigest` of an index read whole and walked (`entriesEnd` from `visitIndexFiles`):
 * the digest of its header and entries whether or not git recorded where they end.
 */
export function entriesDigestOfWalked(data: Buffer, entriesEnd: number): string {
  return `entries:${createHash("sha1").update(data.subarray(0, entriesEnd)).digest("hex")}`;
}
