import { SHA1_BYTES } from "./index-entries.js";

/** git's on-disk stat data of a directory or an ignore file: times, dev, ino, uid, gid, size. */
const STAT_BYTES = 36;

/**
 * The directories in which git's untracked cache (the body of an index's "UNTR" extension)
 * records a per-directory ignore file (`.gitignore`), as workspace-relative paths ("" for the
 * top); null for a body not understood. Git records the id of each directory's ignore file while
 * it reads that directory or checks it is unchanged, so after a status that kept its cache (see
 * `index-format.txt`: "Untracked cache") these are the directories whose own ignore rules can
 * have hidden an untracked file.
 */
export function untrackedCacheIgnoreFileDirs(body: Buffer): string[] | null {
  // The body ends with one NUL, after the stat data and ids the bitmaps count.
  if (body.length < 2 || body[body.length - 1] !== 0) return null;
  const end = body.length - 1;
  const reader = { at: 0 };
  const identLength = readVarint(body, reader, end);
  if (identLength === null) return null;
  // The environment it is valid in; then the stat data of info/exclude and core.excludesFile,
  // the flags, their two ids, and the per-directory file's name.
  reader.at += identLength + 2 * STAT_BYTES + 4 + 2 * SHA1_BYTES;
  if (reader.at >= end) return null;
  const nameEnd = body.indexOf(0, reader.at);
  if (nameEnd === -1 || nameEnd >= end) return null;
  reader.at = nameEnd + 1;
  if (reader.at >= end) return null;
  const directories = readVarint(body, reader, end);
  if (directories === null || directories === 0) return null;
  // The directories, depth first: untracked count, subdirectory count, name, untracked names.
  // Each one's name and parent are kept; a path is made only for the few the answer names.
  const names = new Int32Array(directories);
  const parents = new Int32Array(directories);
  // The directories still being read, outermost first, and how many subdirectories each has left.
  const openIndex = new Int32Array(directories);
  const openLeft = new Float64Array(directories);
  let depth = 0;
  let count = 0;
  // Runs once per directory of the work tree, in a process where it runs cold: names are
  // skipped a byte at a time (a few bytes each), varints of one byte read in place.
  do {
    const untracked = body[reader.at] < 0x80 ? body[reader.at++] : readVarint(body, reader, end);
    const subdirectories = body[reader.at] < 0x80 ? body[reader.at++] : readVarint(body, reader, end);
    if (untracked === null || subdirectories === null || count === directories) return null;
    names[count] = reader.at;
    let at = reader.at;
    for (let i = 0; i <= untracked; i++) {
      while (at < end && body[at] !== 0) at++;
      if (at >= end) return null;
      at++;
    }
    reader.at = at;
    parents[count] = depth > 0 ? openIndex[depth - 1] : -1;
    if (depth > 0) openLeft[depth - 1]--;
    openIndex[depth] = count++;
    openLeft[depth++] = subdirectories;
    while (depth > 0 && openLeft[depth - 1] === 0) depth--;
  } while (depth > 0);
  if (count !== directories) return null;
  const pathOf = (index: number): string => {
    const parts: string[] = [];
    for (let at = index; parents[at] !== -1; at = parents[at]) {
      parts.push(body.toString("latin1", names[at], body.indexOf(0, names[at])));
    }
    return parts.reverse().join("/");
  };
  // Three bitmaps: valid listings (one stat each), check-only, ignore file known (one id each).
  const valid = readEwah(body, reader, end);
  const checkOnly = readEwah(body, reader, end);
  const withIgnoreFile = readEwah(body, reader, end);
  if (valid === null || checkOnly === null || withIgnoreFile === null) return null;
  if (end - reader.at !== valid.length * STAT_BYTES + withIgnoreFile.length * SHA1_BYTES) return null;
  if (withIgnoreFile.some((bit) => bit >= directories)) return null;
  return withIgnoreFile.map(pathOf);
}

/** git's variable-length integer (varint.c): 7 bits a byte, each continuation adding one. */
function readVarint(data: Buffer, reader: { at: number }, end: number): number | null {
  if (reader.at >= end) return null;
  let byte = data[reader.at++];
  let value = byte & 0x7f;
  while (byte & 0x80) {
    if (reader.at >= end || value > 0xffffff) return null;
    byte = data[reader.at++];
    value = (value + 1) * 128 + (byte & 0x7f);
  }
  return value;
}

/**
 * The bits an EWAH bitmap (ewah_io.c) sets: bit count, word count, the 64-bit words, the
 * position of the last run word. A run word says how many all-0 or all-1 words come (bit 0,
 * bits 1-32), then how many literal words follow it (bits 33-63); bit i of a word is bit
 * 64 x (its place) + i.
 */
function readEwah(data: Buffer, reader: { at: number }, end: number): number[] | null {
  if (reader.at + 8 > end) return null;
  const bits = data.readUInt32BE(reader.at);
  const words = data.readUInt32BE(reader.at + 4);
  const wordsAt = reader.at + 8;
  if (wordsAt + words * 8 + 4 > end) return null;
  const set: number[] = [];
  let place = 0; // in 64-bit words of the bitmap
  for (let word = 0; word < words; ) {
    const high = data.readUInt32BE(wordsAt + word * 8);
    const low = data.readUInt32BE(wordsAt + word * 8 + 4);
    const run = (low >>> 1) + (high & 1) * 2 ** 31;
    if (low & 1) {
      if ((place + run) * 64 > bits + 63) return null;
      for (let bit = place * 64; bit < (place + run) * 64; bit++) set.push(bit);
    }
    place += run;
    const literals = high >>> 1;
    if (word + 1 + literals > words) return null;
    for (let i = 1; i <= literals; i++, place++) {
      const at = wordsAt + (word + i) * 8;
      const halves = [data.readUInt32BE(at + 4), data.readUInt32BE(at)]; // bits 0-31, 32-63
      for (let half = 0; half < 2; half++) {
        for (let value = halves[half]; value !== 0; value &= value - 1) {
          set.push(place * 64 + half * 32 + (31 - Math.clz32(value & -value)));
        }
      }
    }
    word += 1 + literals;
  }
  if (set.length > 0 && set[set.length - 1] >= bits) return null;
  reader.at = wordsAt + words * 8 + 4;
  return set;
}
