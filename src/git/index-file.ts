import { createHash } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  fstatSync,
  promises as fs,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
} from "node:fs";
import { HEADER, type IndexSummary, SHA1_BYTES, scanWindow, startScan, summaryOf } from "./index-entries.js";

type IndexReader = {
  size: number;
  read: (length: number, position: number) => Promise<Buffer>;
  /** The SHA-1 (hex) of bytes [0, end), or null when fewer could be read. */
  sha1Of: (end: number) => string | null;
};

/**
 * Read at a time into one small buffer to hash a file: on the machines measured, 10 MB of fresh
 * memory cost ~40 ms to fill, against ~9 ms for reading and hashing it through 256 KiB.
 */
const HASH_CHUNK = 256 * 1024;

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
      sha1Of: (end) => {
        const hash = createHash("sha1");
        const chunk = Buffer.allocUnsafe(Math.min(end, HASH_CHUNK));
        for (let position = 0; position < end; ) {
          // At once: this runs where the snapshot waits for its answer.
          const bytesRead = readSync(handle.fd, chunk, 0, Math.min(chunk.length, end - position), position);
          if (bytesRead === 0) return null;
          hash.update(chunk.subarray(0, bytesRead));
          position += bytesRead;
        }
        return hash.digest("hex");
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
export function usesSplitIndex(gitDir: string): boolean {
  // At once: a git directory holds a few dozen names, and the callers must not wait a turn.
  let names: string[];
  try {
    names = readdirSync(gitDir);
  } catch {
    return false;
  }
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
 * A digest of the index's header and entries only ("entries:…"), or (without an "EOIE"
 * extension, which git writes with `index.recordEndOfIndexEntries`) its checksum; null when it
 * is missing. Git rewrites a status index's cache extensions on every run; its entries change
 * only when an entry does, which is what a cache of conclusions about the entries must follow.
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
  const entries = index.sha1Of(end);
  return entries === null ? checksumOf(index) : `entries:${entries}`;
}

/**
 * Which file is at `file` now: an index is only ever replaced whole (git writes a lock file and
 * renames it into place), so a new index is a new inode with new times, and the same identity
 * means the same bytes. Null when it cannot be read.
 */
export async function fileIdentity(file: string): Promise<string | null> {
  return identityOf(await fs.stat(file, { bigint: true }).catch(() => null));
}

function identityOf(stat: BigIntStats | null): string | null {
  return stat && `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/** An index file's bytes, and its identity (see `fileIdentity`) where the bytes are surely of it. */
export interface IndexBytes {
  data: Buffer;
  identity: string | null;
}

/**
 * One read of an index file, shared by the steps of a capture that need its bytes: a first
 * snapshot's base count and its clean proof both walk your index, and 10 MB of fresh memory costs
 * about as much to fill as to read. Read in one call: in the chunks of an asynchronous read, each
 * waiting its turn beside status's output, 10 MB took ten times as long. The base count alone
 * (`summary`) walks the file through a small buffer instead, unless the whole file is read anyway.
 */
export class SharedIndexRead {
  private reading: Promise<IndexBytes | null> | null = null;
  private summarizing: Promise<IndexSummary | null> | null = null;
  /** The whole file will be read (`read`): `summary` then shares that read rather than walk it again. */
  wholeWanted = false;

  constructor(readonly file: string) {}

  read(): Promise<IndexBytes | null> {
    this.reading ??= (async () => {
      const before = await fileIdentity(this.file);
      let data: Buffer;
      try {
        data = readFileSync(this.file);
      } catch {
        return null;
      }
      const after = await fileIdentity(this.file);
      return { data, identity: before !== null && before === after ? before : null };
    })();
    return this.reading;
  }

  /** What the base count wants of the file (see `summarizeIndexFile`). */
  summary(): Promise<IndexSummary | null> {
    this.summarizing ??=
      this.reading || this.wholeWanted
        ? this.read().then((read) => read && summaryOf(read.data))
        : Promise.resolve(summarizeIndexFile(this.file));
    return this.summarizing;
  }
}

/**
 * `summaryOf` an index file, read through one buffer of 256 KiB (larger only for an entry that
 * does not fit in it) instead of whole: on the machines measured, a 10 MB index read whole took
 * ~31 ms, ~4 ms through the small buffer, and several times that beside a running status. At
 * once, on one descriptor: a file git replaces meanwhile is still read as it was.
 */
export function summarizeIndexFile(file: string, windowBytes = HASH_CHUNK): IndexSummary | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const { size } = fstatSync(fd);
    let buffer = Buffer.allocUnsafe(Math.max(HEADER, Math.min(size, windowBytes)));
    const readAt = (position: number, length: number) =>
      buffer.subarray(0, readSync(fd, buffer, 0, Math.min(length, buffer.length), position));
    const state = startScan(readAt(0, HEADER), size, false);
    if (state === null) return null;
    for (;;) {
      const from = state.offset;
      const walked = scanWindow(readAt(from, size - from), from, state);
      if (walked === null) return null;
      if (walked === "done") break;
      if (state.offset === from) {
        // One entry longer than the buffer (a path of thousands of bytes), or a file cut short.
        if (buffer.length >= size) return null;
        buffer = Buffer.allocUnsafe(Math.min(size, buffer.length * 2));
      }
    }
    // The extensions, by their headers; only the cache tree's body is kept.
    const extensions = new Set<string>();
    let cacheTree: Buffer | null = null;
    const end = size - SHA1_BYTES;
    let at = state.offset;
    const header = Buffer.alloc(8);
    while (at + 8 <= end) {
      if (readSync(fd, header, 0, 8, at) !== 8) return null;
      const length = header.readUInt32BE(4);
      if (at + 8 + length > end) return null;
      const signature = header.toString("latin1", 0, 4);
      extensions.add(signature);
      if (signature === "TREE") {
        cacheTree = Buffer.allocUnsafe(length);
        if (readSync(fd, cacheTree, 0, length, at + 8) !== length) return null;
      }
      at += 8 + length;
    }
    if (at !== end) return null;
    return { unusual: state.unusual, attributeFiles: state.attributeFiles, extensions, cacheTree };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
