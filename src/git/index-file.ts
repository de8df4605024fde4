import { nodeCrypto } from "../util/crypto.js";
import { type BigIntStats, closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { HEADER, SHA1_BYTES } from "./index-entries.js";

type IndexReader = {
  size: number;
  read: (length: number, position: number) => Buffer;
  /** The SHA-1 (hex) of bytes [0, end), or null when fewer could be read. */
  sha1Of: (end: number) => string | null;
};

/**
 * Read at a time into one small buffer to hash or walk an index: on the machines measured, 10 MB
 * of fresh memory cost ~40 ms to fill, against ~9 ms for reading and hashing it through 256 KiB.
 */
export const WINDOW_BYTES = 256 * 1024;

/**
 * Runs `work` on an open index file; null when the file cannot be opened. Opened and read
 * synchronously: a few small reads, each of which would be a thread-pool trip, and a snapshot
 * asks this before status starts.
 */
function withIndex<T>(file: string, work: (index: IndexReader) => T): T | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const { size } = fstatSync(fd);
    return work({
      size,
      read: (length, position) => {
        const bytes = Buffer.allocUnsafe(length); // only what was read is handed out
        const bytesRead = readSync(fd, bytes, 0, length, position);
        return bytes.subarray(0, bytesRead);
      },
      sha1Of: (end) => {
        const hash = nodeCrypto().createHash("sha1");
        const chunk = Buffer.allocUnsafe(Math.min(end, WINDOW_BYTES));
        for (let position = 0; position < end; ) {
          // At once: this runs where the snapshot waits for its answer.
          const bytesRead = readSync(fd, chunk, 0, Math.min(chunk.length, end - position), position);
          if (bytesRead === 0) return null;
          hash.update(chunk.subarray(0, bytesRead));
          position += bytesRead;
        }
        return hash.digest("hex");
      },
    });
  } finally {
    closeSync(fd);
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
  return withIndex(file, ({ read }) => {
    const header = read(HEADER, 0);
    return header.length === HEADER && header.toString("latin1", 0, 4) === "DIRC"
      ? header.readUInt32BE(8)
      : null;
  });
}

/** The trailing checksum (hex), or null when the file is too short to be an index. */
function checksumOf({ size, read }: IndexReader): string | null {
  return size < HEADER + SHA1_BYTES ? null : read(SHA1_BYTES, size - SHA1_BYTES).toString("hex");
}

/** The index's trailing checksum (hex), or null when the file is missing or too short. */
export async function indexChecksum(file: string): Promise<string | null> {
  return withIndex(file, checksumOf);
}

/** The same, at once: the command-line loader asks it before any promise could settle. */
export function indexChecksumNow(file: string): string | null {
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

/** Git's end-of-entries record, the index's last extension: signature, length, offset, hash. */
export const EOIE_BYTES = 8 + 4 + SHA1_BYTES;

/** Where the entries end, from the bytes where an end-of-entries record would be; null if none. */
export function entriesEnd(eoie: Buffer, size: number): number | null {
  if (eoie.length < EOIE_BYTES || eoie.toString("latin1", 0, 4) !== "EOIE") return null;
  const end = eoie.readUInt32BE(8);
  return eoie.readUInt32BE(4) === 4 + SHA1_BYTES && end >= HEADER && end <= size - SHA1_BYTES - EOIE_BYTES
    ? end
    : null;
}

function entriesDigest(index: IndexReader): string | null {
  const { size, read } = index;
  if (size < HEADER + EOIE_BYTES + SHA1_BYTES) return checksumOf(index);
  const tail = read(EOIE_BYTES + SHA1_BYTES, size - SHA1_BYTES - EOIE_BYTES);
  const end = entriesEnd(tail, size);
  if (end === null) return tail.subarray(EOIE_BYTES).toString("hex"); // the file's checksum
  const entries = index.sha1Of(end);
  return entries === null ? checksumOf(index) : `entries:${entries}`;
}

/**
 * Which file is at `file` now: an index is only ever replaced whole (git writes a lock file and
 * renames it into place), so a new index is a new inode with new times, and the same identity
 * means the same bytes. Null when it cannot be read.
 */
export async function fileIdentity(file: string): Promise<string | null> {
  try {
    return identityOf(statSync(file, { bigint: true })); // one call, cheaper than a thread-pool trip
  } catch {
    return null;
  }
}

export function identityOf(stat: BigIntStats | null): string | null {
  return stat && `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/**
 * git's fsmonitor token in an index (its `FSMN` extension), found through the end-of-entries
 * record (`index.recordEndOfIndexEntries`), so the entries are not read; null without either.
 */
export function fsmonitorToken(file: string): string | null {
  return withIndex(file, (index) => {
    const { size } = index;
    const extensionsEnd = size - SHA1_BYTES - EOIE_BYTES;
    // Only whole reads within the extensions: a short one means a file cut short.
    const read = (position: number, length: number): Buffer | null => {
      if (position < HEADER || position + length > size - SHA1_BYTES) return null;
      const bytes = index.read(length, position);
      return bytes.length === length ? bytes : null;
    };
    const eoie = read(extensionsEnd, EOIE_BYTES);
    let offset = eoie ? entriesEnd(eoie, size) : null;
    while (offset !== null && offset < extensionsEnd) {
      const header = read(offset, 8);
      if (!header) return null;
      const length = header.readUInt32BE(4);
      if (header.toString("latin1", 0, 4) === "FSMN") {
        const data = read(offset + 8, Math.min(length, 4 + 256));
        const end = data?.readUInt32BE(0) === 2 ? data.indexOf(0, 4) : -1;
        return end === -1 ? null : data!.toString("utf8", 4, end);
      }
      offset += 8 + length;
    }
    return null;
  });
}
