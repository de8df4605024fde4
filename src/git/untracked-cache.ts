import { SHA1_BYTES } from "./index-entries.js";

/** git's on-disk stat data of a directory or an ignore file: times, dev, ino, uid, gid, size. */
const STAT_BYTES = 36;

/**
 * Whether git's untracked cache (the body of an index's "UNTR" extension) holds a per-directory
 * ignore file (`.gitignore`) in any directory it records; null for a body not understood. Git
 * records the id of each directory's ignore file while it reads that directory or checks it is
 * unchanged, so after a status that kept its cache (see `index-format.txt`: "Untracked cache")
 * this says whether any ignore rule of the work tree's own can have hidden an untracked file.
 */
export function untrackedCacheHasIgnoreFiles(body: Buffer): boolean | null {
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
  let pending = 1;
  let read = 0;
  while (pending > 0) {
    const untracked = readVarint(body, reader, end);
    const subdirectories = readVarint(body, reader, end);
    if (untracked === null || subdirectories === null) return null;
    for (let i = 0; i <= untracked; i++) {
      const nul = body.indexOf(0, reader.at);
      if (nul === -1 || nul >= end) return null;
      reader.at = nul + 1;
    }
    pending += subdirectories - 1;
    if (++read > directories) return null;
  }
  if (read !== directories) return null;
  // Three bitmaps: valid listings (one stat each), check-only, ignore file known (one id each).
  const valid = readEwahOnes(body, reader, end);
  const checkOnly = readEwahOnes(body, reader, end);
  const withIgnoreFile = readEwahOnes(body, reader, end);
  if (valid === null || checkOnly === null || withIgnoreFile === null) return null;
  if (end - reader.at !== valid * STAT_BYTES + withIgnoreFile * SHA1_BYTES) return null;
  return withIgnoreFile > 0;
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
 * How many bits an EWAH bitmap (ewah_io.c) sets: bit count, word count, the 64-bit words, the
 * position of the last run word. A run word says how many all-0 or all-1 words come (bit 0,
 * bits 1-32), then how many literal words follow it (bits 33-63).
 */
function readEwahOnes(data: Buffer, reader: { at: number }, end: number): number | null {
  if (reader.at + 8 > end) return null;
  const bits = data.readUInt32BE(reader.at);
  const words = data.readUInt32BE(reader.at + 4);
  const wordsAt = reader.at + 8;
  if (wordsAt + words * 8 + 4 > end) return null;
  let ones = 0;
  for (let word = 0; word < words; ) {
    const high = data.readUInt32BE(wordsAt + word * 8);
    const low = data.readUInt32BE(wordsAt + word * 8 + 4);
    const run = (low >>> 1) + (high & 1) * 2 ** 31;
    if (low & 1) ones += run * 64;
    const literals = high >>> 1;
    if (word + 1 + literals > words) return null;
    for (let i = 1; i <= literals; i++) {
      const at = wordsAt + (word + i) * 8;
      ones += popcount(data.readUInt32BE(at)) + popcount(data.readUInt32BE(at + 4));
    }
    word += 1 + literals;
  }
  if (ones > bits) return null;
  reader.at = wordsAt + words * 8 + 4;
  return ones;
}

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
