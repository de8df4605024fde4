import { createHash } from "node:crypto";

/** Walking the bytes of a git index (read whole); reading index files on disk is index-file.ts. */

export const HEADER = 12;
export const SHA1_BYTES = 20;
const FLAG_EXTENDED = 0x4000;
const STAGE_MASK = 0x3000;
const NAME_MASK = 0xfff;
const EXT_SKIP_WORKTREE = 0x4000;
const EXT_INTENT_TO_ADD = 0x2000;

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
      const [strip, suffix] = nameStrip(data, cursor);
      cursor = suffix;
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

/** A version 4 entry's count of bytes to strip from the previous name, and where its suffix starts. */
function nameStrip(data: Buffer, at: number): [number, number] {
  let byte = data[at++];
  let strip = byte & 0x7f;
  while (byte & 0x80) {
    byte = data[at++];
    strip = ((strip + 1) << 7) | (byte & 0x7f);
  }
  return [strip, at];
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

/** What one walk of an index finds (see `scanIndex`). */
export interface IndexScan {
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
  /** Whether some entry is a conflict, intent-to-add or a sparse directory. */
  unusual: boolean;
  /** The paths (one char per byte) of the `.gitattributes` entries. */
  attributeFiles: string[];
}

const ATTRIBUTES = Buffer.from(".gitattributes");
const scanned = new WeakMap<Buffer, IndexScan | null>();

/**
 * The checked-out, stage-0 regular files of a SHA-1 index (versions 2 to 4): no symlinks,
 * submodules or sparse directories, no skip-worktree or intent-to-add entries; with what else
 * the base count wants (`indexSubtree`), so a first snapshot walks your index once. Null for
 * anything not fully understood (a split index, another hash, damage), so the caller falls back
 * to the slow path instead of trusting a guess. The same bytes are walked once.
 */
export function scanIndex(data: Buffer): IndexScan | null {
  let scan = scanned.get(data);
  if (scan === undefined) {
    scan = scanWhole(data);
    scanned.set(data, scan);
  }
  return scan;
}

function scanWhole(data: Buffer): IndexScan | null {
  const state = startScan(data, data.length, true);
  if (state === null || scanWindow(data, 0, state) !== "done") return null;
  // A split index keeps most entries in a shared file: not understood here.
  const extensions = indexExtensions(data, state.offset);
  if (extensions === null || extensions.has("link")) return null;
  const { files, items } = state;
  return {
    count: files,
    oidOffsets: items!.oidOffsets.subarray(0, files),
    statSizes: items!.statSizes.subarray(0, files),
    positions: items!.positions.subarray(0, files),
    entriesEnd: state.offset,
    unusual: state.unusual,
    attributeFiles: state.attributeFiles,
  };
}

/**
 * Where a walk of an index's entries stands. It goes one window of the file's bytes at a time
 * (the whole file read at once is one window), so an index can be walked through a small buffer:
 * 10 MB of fresh memory cost more to fill than the walk itself.
 */
export interface ScanState {
  version: number;
  /** The index's entries, and how many were walked. */
  count: number;
  walked: number;
  /** Where the next entry starts in the file (once all are walked, where the extensions begin). */
  offset: number;
  /** Where entries must end: the file's size less its trailing checksum. */
  limit: number;
  files: number;
  unusual: boolean;
  attributeFiles: string[];
  /** Version 4: the last entry's path, rebuilt (its first `nameLength` bytes). */
  name: Buffer;
  nameLength: number;
  /** Per regular file, kept only where the whole file is in memory (see IndexScan). */
  items: { oidOffsets: Int32Array; statSizes: Uint32Array; positions: Int32Array } | null;
}

/** A walk of an index of `size` bytes whose first bytes are `header`; null if not understood. */
export function startScan(header: Buffer, size: number, keepItems: boolean): ScanState | null {
  if (size < HEADER + SHA1_BYTES || header.length < HEADER || header.toString("latin1", 0, 4) !== "DIRC") {
    return null;
  }
  const version = header.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = header.readUInt32BE(8);
  const limit = size - SHA1_BYTES;
  if (count > (limit - HEADER) / 62) return null; // an entry takes at least 62 bytes
  return {
    version,
    count,
    walked: 0,
    offset: HEADER,
    limit,
    files: 0,
    unusual: false,
    attributeFiles: [],
    name: Buffer.alloc(version === 4 ? 256 : 0),
    nameLength: 0,
    items: keepItems
      ? {
          oidOffsets: new Int32Array(count),
          statSizes: new Uint32Array(count),
          positions: new Int32Array(count),
        }
      : null,
  };
}

/**
 * Walks the entries that lie whole in `data`, which holds the file's bytes from `base` on.
 * "more": the next entry goes past the window (read the file again from `state.offset`);
 * "done": every entry was walked; null: not understood, or damaged. One loop into typed arrays,
 * no call per entry: this runs over 100k entries once in a process, unoptimized, where a
 * callback per entry and growing arrays cost twice as much (~60 against ~30 ms).
 */
export function scanWindow(data: Buffer, base: number, state: ScanState): "done" | "more" | null {
  const { version, count, items } = state;
  const limit = state.limit - base; // where entries must end, in `data`'s terms
  const complete = data.length >= limit; // the window holds every byte an entry may have
  const end = complete ? limit : data.length;
  const short = complete ? null : "more"; // what an entry going past `end` means
  let { walked, files, unusual, nameLength, name } = state;
  let offset = state.offset - base;
  let result: "done" | "more" | null = "done";
  for (; walked < count; walked++) {
    // Bytes past `end` read as undefined (0): the name's end is then past it too, and turned away.
    if (offset + 62 > end) {
      result = short;
      break;
    }
    const flags = (data[offset + 60] << 8) | data[offset + 61];
    let cursor = offset + 62;
    let extended = 0;
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return null;
      extended = (data[cursor] << 8) | data[cursor + 1];
      cursor += 2;
    }
    let next: number;
    let nameStart: number;
    let nameEnd: number;
    let names: Buffer = data;
    if (version === 4) {
      // The path is the last one minus `strip` trailing bytes, plus a NUL-terminated suffix.
      let at = cursor;
      let byte = data[at++];
      let strip = byte & 0x7f;
      while (byte & 0x80 && at < end) {
        byte = data[at++];
        strip = ((strip + 1) << 7) | (byte & 0x7f);
      }
      const nul = data.indexOf(0, at);
      if (byte & 0x80 || nul === -1 || nul >= end) {
        result = short;
        break;
      }
      if (strip > nameLength) return null;
      const kept = nameLength - strip;
      if (kept + (nul - at) > name.length) {
        const grown = Buffer.alloc(2 * (kept + (nul - at)));
        name.copy(grown, 0, 0, kept);
        name = grown;
      }
      data.copy(name, kept, at, nul);
      nameLength = kept + (nul - at);
      names = name;
      nameStart = 0;
      nameEnd = nameLength;
      next = nul + 1;
    } else {
      // The flags hold the name's length below 4095; a longer name is found by its NUL.
      const length = flags & NAME_MASK;
      const nul = length < NAME_MASK ? cursor + length : data.indexOf(0, cursor);
      if (nul === -1 || nul >= end) {
        result = short;
        break;
      }
      if (data[nul] !== 0) return null;
      nameStart = cursor;
      nameEnd = nul;
      next = offset + ((nul - offset + 8) & ~7); // NUL-padded to a multiple of 8 bytes
    }
    // A name ending in "/.gitattributes" or that alone; its last byte turns most away at once.
    const from = nameEnd - ATTRIBUTES.length;
    if (
      names[nameEnd - 1] === 0x73 &&
      from >= nameStart &&
      (from === nameStart || names[from - 1] === 0x2f)
    ) {
      let same = true;
      for (let k = 0; k < ATTRIBUTES.length && same; k++) same = names[from + k] === ATTRIBUTES[k];
      if (same) state.attributeFiles.push(names.toString("latin1", nameStart, nameEnd));
    }
    if ((flags & STAGE_MASK) !== 0 || extended & EXT_INTENT_TO_ADD || (data[offset + 26] & 0xf0) === 0x40) {
      unusual = true; // 0x40 in the mode's third byte: 0o040000, a sparse directory
    }
    // The mode's type bits (0o170000) are the high half of its third byte: 0o100000, a file.
    if (
      (data[offset + 26] & 0xf0) === 0x80 &&
      (flags & STAGE_MASK) === 0 &&
      (extended & (EXT_SKIP_WORKTREE | EXT_INTENT_TO_ADD)) === 0
    ) {
      if (items) {
        items.oidOffsets[files] = base + offset + 40;
        items.statSizes[files] = uint32At(data, offset + 36);
        items.positions[files] = walked;
      }
      files++;
    }
    offset = next;
  }
  state.walked = walked;
  state.files = files;
  state.unusual = unusual;
  state.name = name;
  state.nameLength = nameLength;
  state.offset = base + offset;
  return result;
}

/** What the base count wants of an index (see `indexSubtree`), from a walk of it whole or in windows. */
export interface IndexSummary {
  /** Whether some entry is a conflict, intent-to-add or a sparse directory. */
  unusual: boolean;
  /** The paths (one char per byte) of the `.gitattributes` entries. */
  attributeFiles: string[];
  /** The signatures of its extensions. */
  extensions: ReadonlySet<string>;
  /** The body of its cache tree extension ("TREE"), if it has one. */
  cacheTree: Buffer | null;
}

/** The summary of an index read whole; null where `scanIndex` is. */
export function summaryOf(data: Buffer): IndexSummary | null {
  const scan = scanIndex(data);
  const extensions = scan && indexExtensions(data, scan.entriesEnd);
  if (!scan || !extensions) return null;
  const tree = extensions.get("TREE");
  return {
    unusual: scan.unusual,
    attributeFiles: scan.attributeFiles,
    extensions: new Set(extensions.keys()),
    cacheTree: tree ? data.subarray(tree[0], tree[1]) : null,
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
 * `indexEntriesDigest` of an index read whole and walked (`entriesEnd` from `scanIndex`):
 * the digest of its header and entries whether or not git recorded where they end.
 */
export function entriesDigestOfWalked(data: Buffer, entriesEnd: number): string {
  return `entries:${createHash("sha1").update(data.subarray(0, entriesEnd)).digest("hex")}`;
}
