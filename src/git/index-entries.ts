/** Walking the bytes of a git index, whole or a window at a time; reading index files on disk is index-file.ts. */

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

/**
 * The checked-out, stage-0 regular files of a SHA-1 index (versions 2 to 4): no symlinks,
 * submodules or sparse directories, no skip-worktree or intent-to-add entries.
 */
export interface IndexScan {
  /** How many; each array below holds that many items. */
  count: number;
  /** Their blob ids, copied out of the index: item i's is the 20 bytes at i × 20. */
  ids: Buffer;
  /** Each one's work-tree size when its entry was written, modulo 2^32 (git's `sd_size`). */
  statSizes: Uint32Array;
  /** Each one's position among all the index's entries (see `ScanState.namesAt`). */
  positions: Int32Array;
}

const ATTRIBUTES = Buffer.from(".gitattributes");
const GHOSTIGNORE = Buffer.from(".ghostignore");

/** The regular files a walk kept (`startScan` with `keepItems`), once it is done. */
export function scanResult(state: ScanState): IndexScan {
  const { files, items } = state;
  return {
    count: files,
    ids: items!.ids.subarray(0, files * SHA1_BYTES),
    statSizes: items!.statSizes.subarray(0, files),
    positions: items!.positions.subarray(0, files),
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
  ghostignoreFiles: string[];
  /** Version 4: the last entry's path, rebuilt (its first `nameLength` bytes). */
  name: Buffer;
  nameLength: number;
  /** Per regular file, kept where asked for (see IndexScan). */
  items: { ids: Buffer; statSizes: Uint32Array; positions: Int32Array } | null;
  /** The paths (one char per byte) of the entries at these positions, where asked for. */
  namesAt: ReadonlySet<number> | null;
  names: string[];
}

/** A walk of an index of `size` bytes whose first bytes are `header`; null if not understood. */
export function startScan(
  header: Buffer,
  size: number,
  keepItems: boolean,
  namesAt: ReadonlySet<number> | null = null,
): ScanState | null {
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
    ghostignoreFiles: [],
    name: Buffer.alloc(version === 4 ? 256 : 0),
    nameLength: 0,
    items: keepItems
      ? {
          ids: Buffer.allocUnsafe(count * SHA1_BYTES),
          statSizes: new Uint32Array(count),
          positions: new Int32Array(count),
        }
      : null,
    namesAt,
    names: [],
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
  const { version, count, items, namesAt } = state;
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
    // And "/.ghostignore" (below the top: the root's own is read anyway), which ends in "e".
    const ghostFrom = nameEnd - GHOSTIGNORE.length;
    if (names[nameEnd - 1] === 0x65 && ghostFrom > nameStart && names[ghostFrom - 1] === 0x2f) {
      let same = true;
      for (let k = 0; k < GHOSTIGNORE.length && same; k++) same = names[ghostFrom + k] === GHOSTIGNORE[k];
      if (same) state.ghostignoreFiles.push(names.toString("latin1", nameStart, nameEnd));
    }
    if (namesAt?.has(walked)) state.names.push(names.toString("latin1", nameStart, nameEnd));
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
        // Byte by byte: Buffer.copy is a native call, costly 100k times over 20 bytes.
        const to = files * SHA1_BYTES;
        for (let k = 0; k < SHA1_BYTES; k++) items.ids[to + k] = data[offset + 40 + k];
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
  /** The paths of the `.ghostignore` entries below the top. */
  ghostignoreFiles: string[];
  /** The signatures of its extensions. */
  extensions: ReadonlySet<string>;
  /** The body of its cache tree extension ("TREE"), if it has one. */
  cacheTree: Buffer | null;
}
