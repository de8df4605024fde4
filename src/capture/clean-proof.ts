import path from "node:path";
import { promises as fs } from "node:fs";
import { runGit, splitNul } from "../git/exec.js";
import { indexEntriesDigest, visitIndexFiles } from "../git/index-file.js";
import { OidTable } from "../git/oid-table.js";
import type { RelPath } from "../paths.js";
import { readJson, STORE_FILES, type StorePaths, writeFileAtomic } from "../store/layout.js";
import { trace } from "../util/trace.js";
import type { Conversion } from "./conversion.js";

/** What one index proved, kept until the user's git writes another index. */
interface ProofCache {
  checksum: string;
  unproven: RelPath[];
  /** The index file's stat identity when last checked against `checksum` (see `fileIdentity`). */
  file?: string;
}

export function isProofCache(value: unknown): value is ProofCache {
  const v = value as ProofCache | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.checksum === "string" &&
    Array.isArray(v.unproven) &&
    v.unproven.every((p) => typeof p === "string")
  );
}

const SIZE_WRAP = 2 ** 32;

/**
 * The tracked files (repository-relative) that git's stat cache calls clean but that may still
 * differ from their index blob because the user's git converts content, or null where that cannot
 * be worked out (then every tracked file must be read).
 *
 * A stat-clean file has the size its index entry recorded. Cleaning with text, eol, crlf or ident
 * only removes bytes, so when that size equals the blob's size nothing was removed and the file
 * is the blob, byte for byte. Files whose sizes differ (CRLF on disk, a CRLF checkout) and files
 * under a filter or working-tree encoding are the ones to read. The answer depends only on the
 * index's entries (and the attributes, for the latter), so it is cached by a digest of them.
 */
export async function unprovenCleanFiles(options: {
  indexFile: string;
  paths: StorePaths;
  readEnv: NodeJS.ProcessEnv;
  worktreeRoot: string;
  conversion: Conversion;
}): Promise<RelPath[] | null> {
  const { indexFile, paths, readEnv, worktreeRoot, conversion } = options;
  if (conversion.perFile === null) return null;
  const perFile =
    conversion.perFile.length === 0
      ? Promise.resolve([])
      : runGit(["-c", "core.fsmonitor=false", "ls-files", "-z", "--", ...conversion.perFile], {
          cwd: worktreeRoot,
          env: { GIT_LITERAL_PATHSPECS: "0", GIT_INDEX_FILE: indexFile, GIT_OPTIONAL_LOCKS: "0" },
        }).then((r) => splitNul(r.stdout).map((name) => name.toString("latin1")));
  const sizeMismatches = mismatchedSizes(indexFile, paths, readEnv);
  const [filtered, mismatched] = await Promise.all([perFile, sizeMismatches]);
  if (mismatched === null) return null;
  return [...new Set([...mismatched, ...filtered])];
}

async function mismatchedSizes(
  indexFile: string,
  paths: StorePaths,
  readEnv: NodeJS.ProcessEnv,
): Promise<RelPath[] | null> {
  const cacheFile = path.join(paths.dir, STORE_FILES.cleanProof);
  const sizesFile = path.join(paths.dir, STORE_FILES.blobSizes);
  const [identity, cached] = await Promise.all([
    fileIdentity(indexFile),
    readJson<ProofCache | null>(cacheFile, null, isProofCache),
  ]);
  // The same file as last time: its entries are unchanged, without reading 10 MB to digest them.
  if (identity !== null && cached?.file === identity) return cached.unproven;
  trace("capture: clean proof checked against a digest of the index's entries");
  const checksum = await indexEntriesDigest(indexFile);
  if (checksum === null) return [];
  if (cached?.checksum === checksum) {
    await writeFileAtomic(cacheFile, JSON.stringify({ ...cached, file: identity }), 0o600, false).catch(() => {});
    return cached.unproven;
  }
  trace("capture: clean proof made from the whole index");

  const [data, sizesData] = await Promise.all([
    fs.readFile(indexFile).catch(() => null),
    fs.readFile(sizesFile).catch(() => null),
  ]);
  if (!data || data.length < 12) return null;
  const cachedSizes = isSizeTable(sizesData) ? sizesData : null;
  // No sizes kept yet (a new store): git starts listing every object's size at once, and the
  // index is read while it does; its lines are matched as they arrive.
  const lines = new SizeLines();
  const entryCount = data.readUInt32BE(8);
  const listingEarly =
    cachedSizes === null && entryCount >= 1000 && (await packedObjectCount(paths.objectsDir)) <= 4 * entryCount
      ? listSizes(paths, readEnv, lines, null)
      : null;
  listingEarly?.catch(() => {}); // awaited below
  // One walk notes where each regular file's blob id is and its recorded size; ids stay bytes
  // in the index data (see OidTable), and paths are read only for the files left unproven.
  const oidOffsets: number[] = [];
  const statSizes: number[] = [];
  const ordinals: number[] = [];
  let ordinal = 0;
  const understood = visitIndexFiles(data, (entry) => {
    // Symlinks are read as links, never converted: only regular files can differ.
    if ((entry.mode & 0o170000) === 0o100000) {
      oidOffsets.push(entry.oidOffset);
      statSizes.push(entry.statSize);
      ordinals.push(ordinal);
    }
    ordinal++;
  });
  if (!understood) return null;
  const table = new OidTable(data, oidOffsets);
  const sizes = new Float64Array(oidOffsets.length).fill(-1);
  if (cachedSizes) applySizeTable(cachedSizes, table, sizes);
  lines.matchInto(table, sizes);
  if (listingEarly) {
    await listingEarly;
    lines.end();
    trace("capture: every blob size listed by git");
  } else {
    const wanted: string[] = [];
    for (let item = 0; item < sizes.length; item++) {
      if (sizes[item] < 0) wanted.push(data.toString("hex", oidOffsets[item], oidOffsets[item] + 20));
    }
    if (wanted.length > 0) {
      // Where they are most of the objects git has (a young clone), listing every object's size
      // is faster than asking for each: git walks its pack indexes in order.
      const all = wanted.length >= 1000 && (await packedObjectCount(paths.objectsDir)) <= 4 * wanted.length;
      await listSizes(paths, readEnv, lines, all ? null : [...new Set(wanted)]);
      lines.end();
      trace(`capture: ${wanted.length} blob sizes asked of git, ${all ? "listing every object" : "one by one"}`);
    }
  }
  const unprovenAt = new Set<number>();
  for (let item = 0; item < sizes.length; item++) {
    const size = sizes[item];
    if (size < 0 || size >= SIZE_WRAP || size !== statSizes[item]) unprovenAt.add(ordinals[item]);
  }
  const unproven: RelPath[] = [];
  if (unprovenAt.size > 0) {
    let n = 0;
    visitIndexFiles(data, (entry) => {
      if (unprovenAt.has(n++)) unproven.push(entry.path());
    });
  }
  // Only the sizes of the blobs this index names are kept: the table stays the index's size.
  await writeSizes(sizesFile, data, oidOffsets, sizes).catch(() => {});
  await fs.rm(path.join(paths.dir, "blob-sizes.json"), { force: true }).catch(() => {}); // earlier versions' table
  const proof: ProofCache = { checksum, unproven, ...(identity === null ? {} : { file: identity }) };
  await writeFileAtomic(cacheFile, JSON.stringify(proof), 0o600, false).catch(() => {});
  return unproven;
}

/** One record of the blob size table: the blob id's 20 bytes, then its size (48 bits, big-endian). */
const SIZE_RECORD = 26;
const SIZES_MAGIC = Buffer.from("ghostcommit blob sizes 1\n");

function isSizeTable(data: Buffer | null): data is Buffer {
  return (
    data !== null &&
    data.length >= SIZES_MAGIC.length &&
    data.subarray(0, SIZES_MAGIC.length).equals(SIZES_MAGIC) &&
    (data.length - SIZES_MAGIC.length) % SIZE_RECORD === 0
  );
}

/** Applies the cached table (a blob's size never changes). */
function applySizeTable(data: Buffer, table: OidTable, sizes: Float64Array): void {
  for (let at = SIZES_MAGIC.length; at < data.length; at += SIZE_RECORD) {
    const size = data.readUIntBE(at + 20, 6);
    for (let found = table.firstWithId(data, at); found !== -1; found = table.nextWithSameId(found)) {
      sizes[table.itemAt(found)] = size;
    }
  }
}

/**
 * Writes the table without waiting for the disk: it is a cache, and a torn one reads as empty.
 * A blob named twice is written twice (cheaper than a set; reading keeps one).
 */
async function writeSizes(file: string, index: Buffer, oidOffsets: number[], sizes: Float64Array): Promise<void> {
  let known = 0;
  for (const size of sizes) if (size >= 0) known++;
  const data = Buffer.allocUnsafe(SIZES_MAGIC.length + known * SIZE_RECORD);
  SIZES_MAGIC.copy(data, 0);
  let at = SIZES_MAGIC.length;
  for (let item = 0; item < sizes.length; item++) {
    if (sizes[item] < 0) continue;
    // Byte by byte: a call to copy or writeUIntBE per record cost more than the 26 bytes.
    const from = oidOffsets[item];
    for (let i = 0; i < 20; i++) data[at + i] = index[from + i];
    let size = Math.min(sizes[item], 2 ** 48 - 1);
    for (let i = 25; i >= 20; i--) {
      data[at + i] = size % 256;
      size = Math.floor(size / 256);
    }
    at += SIZE_RECORD;
  }
  await writeFileAtomic(file, data, 0o600, false);
}

/** Asks git the size of the given objects, or of every object it has (null), into `lines`. */
async function listSizes(
  paths: StorePaths,
  readEnv: NodeJS.ProcessEnv,
  lines: SizeLines,
  ids: string[] | null,
): Promise<void> {
  const format = "--batch-check=%(objectname) %(objecttype) %(objectsize)";
  await runGit(ids === null ? ["cat-file", "--batch-all-objects", format] : ["cat-file", format], {
    cwd: paths.dir,
    env: readEnv,
    input: ids === null ? undefined : `${ids.join("\n")}\n`,
    onStdout: (chunk) => lines.feed(chunk),
  });
}

/**
 * Git's "<40 hex> <type> <size>" lines, read as bytes as they arrive and matched against the
 * index's blob ids once the table of them is there (until then they wait). Lines of other types
 * and "missing" are skipped.
 */
class SizeLines {
  private rest: Buffer | null = null;
  private waiting: Buffer[] | null = [];
  private table: OidTable | null = null;
  private sizes: Float64Array | null = null;

  feed(chunk: Buffer): void {
    if (this.waiting) this.waiting.push(chunk);
    else this.parse(chunk);
  }

  matchInto(table: OidTable, sizes: Float64Array): void {
    this.table = table;
    this.sizes = sizes;
    const waiting = this.waiting ?? [];
    this.waiting = null;
    for (const chunk of waiting) this.parse(chunk);
  }

  /** The output ended: a last line without its newline counts too. */
  end(): void {
    if (this.rest) this.line(this.rest, 0, this.rest.length);
    this.rest = null;
  }

  private parse(chunk: Buffer): void {
    const out = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    let at = 0;
    for (let end = out.indexOf(0x0a, at); end !== -1; end = out.indexOf(0x0a, at)) {
      this.line(out, at, end);
      at = end + 1;
    }
    this.rest = at < out.length ? out.subarray(at) : null;
  }

  private line(out: Buffer, at: number, end: number): void {
    // The type's first letter tells a blob ("b") from a tree, commit, tag or "missing".
    if (end - at <= 46 || out[at + 40] !== 0x20 || out[at + 41] !== 0x62) return;
    let size = 0;
    for (let i = at + 46; i < end; i++) size = size * 10 + (out[i] - 48);
    const table = this.table!;
    for (let found = table.firstWithHexId(out, at); found !== -1; found = table.nextWithSameId(found)) {
      this.sizes![table.itemAt(found)] = size;
    }
  }
}

/** How many objects the store's packs and those it borrows from hold (from each pack index's header). */
async function packedObjectCount(objectsDir: string): Promise<number> {
  const alternates = await fs.readFile(path.join(objectsDir, "info", "alternates"), "utf8").catch(() => "");
  const dirs = [objectsDir, ...alternates.split("\n").filter((line) => line.startsWith("/"))];
  let total = 0;
  for (const dir of dirs) {
    const packDir = path.join(dir, "pack");
    const names = await fs.readdir(packDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith(".idx"))) {
      const handle = await fs.open(path.join(packDir, name), "r").catch(() => null);
      if (!handle) continue;
      try {
        // Version 2: magic, version, then 256 fan-out counts; the last is the object count.
        const head = Buffer.alloc(8 + 256 * 4);
        const { bytesRead } = await handle.read(head, 0, head.length, 0);
        if (bytesRead === head.length && head.readUInt32BE(0) === 0xff744f63) total += head.readUInt32BE(8 + 255 * 4);
        else return Number.POSITIVE_INFINITY; // an old or unknown index: ask for each blob
      } finally {
        await handle.close();
      }
    }
  }
  return total;
}

/**
 * Which file is at `file` now: an index is only ever replaced whole (git writes a lock file and
 * renames it into place), so a new index is a new inode with new times, and the same identity
 * means the same bytes. Null when it cannot be read.
 */
async function fileIdentity(file: string): Promise<string | null> {
  const stat = await fs.stat(file, { bigint: true }).catch(() => null);
  return stat && `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}
