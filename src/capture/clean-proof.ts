import path from "node:path";
import { existsSync, promises as fs } from "node:fs";
import { runGit, splitNul } from "../git/exec.js";
import { fileIdentity, indexEntriesDigest, usesSplitIndex } from "../git/index-file.js";
import { SharedIndexWalk, walkIndexFile } from "../git/index-walk.js";
import { OidTable } from "../git/oid-table.js";
import {
  appendSizes,
  applySizeTable,
  askSizes,
  isSizeTable,
  ProvenSizes,
  sizeTableRecords,
  writeSizes,
} from "./blob-sizes.js";
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
  /** The proof started on the user's index while status ran (see `EarlyProof`). */
  early?: Promise<unknown> | null;
  /** The user's index, read once for every step that needs its bytes. */
  userIndex?: SharedIndexWalk;
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
  // Made early on the same index, the proof is kept by that index's identity and found at once;
  // should that early run have failed, it is made here as it would have been.
  const sizeMismatches = Promise.resolve(options.early)
    .catch(() => {})
    .then(() => mismatchedSizes(indexFile, paths, readEnv, options.userIndex ?? null));
  const [filtered, mismatched] = await Promise.all([perFile, sizeMismatches]);
  if (mismatched === null) return null;
  return [...new Set([...mismatched, ...filtered])];
}

/**
 * The proof of the user's index, started beside status where it will have to be made from the
 * whole index with no blob sizes known: the user's git converts content and the store holds
 * neither a proof nor a size table (a first snapshot). Asking every blob's size is git's CPU work
 * of about 200 milliseconds for 100k files; started beside status, it runs while status waits on
 * the disk rather than after it. Status's private copy of the index has the same
 * entries, so the proof made here serves it too. Started on a guess (a conversion in the root's
 * .gitattributes on disk, say), it only fills a cache should the checks after status decide the
 * proof is not needed.
 */
export class EarlyProof {
  started: Promise<void> | null = null;
  private readonly checks: Promise<unknown>[] = [];

  constructor(
    private readonly paths: StorePaths,
    private readonly readEnv: NodeJS.ProcessEnv,
    private readonly userIndex: SharedIndexWalk,
  ) {}

  /** Starts the proof (once) where `converts` says the user's git converts content; returns it. */
  startIf(converts: Conversion | null): Conversion | null {
    if (converts?.perFile && !this.started) {
      this.started = this.run();
      this.started.catch(() => {}); // awaited by the proof after status
    }
    return converts;
  }

  /** Starts the proof once `check` says the user's git converts content (a failed check: never). */
  startWhen(check: Promise<Conversion | null>): void {
    this.checks.push(
      check.then(
        (converts) => this.startIf(converts),
        () => {},
      ),
    );
  }

  /**
   * Every check given to `startWhen` has answered. The capture waits for them before it ends: one
   * still running after it would read HEAD's trees with the object cache gone, starting git for
   * nothing.
   */
  async checksSettled(): Promise<void> {
    await Promise.all(this.checks);
  }

  private async run(): Promise<void> {
    // Checked at once, without waiting a turn behind status's output: git's answers are what a
    // first snapshot ends up waiting for.
    const kept = (file: string) => existsSync(path.join(this.paths.dir, file));
    if (kept(STORE_FILES.cleanProof) || kept(STORE_FILES.blobSizes)) return;
    // A split index cannot be proven (every tracked file is read then): no sizes asked for nothing.
    if (usesSplitIndex(path.dirname(this.userIndex.file))) return;
    trace("capture: clean proof started beside status");
    // The base count, asked for meanwhile, takes the proof's walk of your index.
    this.userIndex.proofWanted = true;
    await mismatchedSizes(this.userIndex.file, this.paths, this.readEnv, this.userIndex);
  }
}

async function mismatchedSizes(
  indexFile: string,
  paths: StorePaths,
  readEnv: NodeJS.ProcessEnv,
  userIndex: SharedIndexWalk | null,
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
  // A kept proof for these entries, now known under this file's identity (when it is sure).
  const reuse = async (proof: ProofCache, file: string | null): Promise<RelPath[]> => {
    const kept: ProofCache = {
      checksum: proof.checksum,
      unproven: proof.unproven,
      ...(file === null ? {} : { file }),
    };
    await writeFileAtomic(cacheFile, JSON.stringify(kept), 0o600, false).catch(() => {});
    return proof.unproven;
  };
  if (cached?.checksum === checksum) return reuse(cached, identity);
  trace("capture: clean proof made from the whole index");

  const sizesData = await fs.readFile(sizesFile).catch(() => null);
  const cachedSizes = isSizeTable(sizesData) ? sizesData : null;
  // Your index is walked once for the base count and the proof; status's private copy here only.
  // Where git recorded the entries' end, the digest above is of these very entries when the file
  // walked is the one whose identity was taken: not taken again.
  const known = identity !== null && checksum.startsWith("entries:") ? { identity, digest: checksum } : null;
  const walked = (userIndex?.file === indexFile ? userIndex : new SharedIndexWalk(indexFile)).walk(known);
  if (!walked?.files || !walked.digest) return null;
  // One walk noted each regular file's blob id and recorded size; paths are read only for the
  // files left unproven.
  const { files } = walked;
  const { ids, statSizes } = files;
  // Kept under the digest of the entries it is made from, whether or not git recorded where they
  // end (where it did not, the digest above is the checksum of the whole file, which changes with
  // its caches): so a proof made on your index serves a private copy of it with the same
  // entries, and a proof already made for these entries is not made again. It is known under the
  // identity of the file walked only where that is the file `identity` was taken of.
  const unchanged = identity !== null && walked.identity === identity;
  const madeFrom = walked.digest;
  if (cached?.checksum === madeFrom) return reuse(cached, unchanged ? identity : null);
  const sized = new ProvenSizes(statSizes.subarray(0, files.count));
  if (cachedSizes) applySizeTable(cachedSizes, new OidTable(ids), sized);
  const { sizes } = sized;
  // The blobs whose sizes the kept table did not have (with no table, all of them: null).
  let asked: Int32Array | null = null;
  if (cachedSizes) {
    let unknown = 0;
    for (let item = 0; item < sizes.length; item++) if (sizes[item] < 0) unknown++;
    asked = new Int32Array(unknown);
    for (let item = 0, k = 0; item < sizes.length; item++) if (sizes[item] < 0) asked[k++] = item;
  }
  if (asked === null || asked.length > 0) {
    await askSizes(paths, readEnv, ids, asked, sized);
    trace(`capture: ${asked?.length ?? sizes.length} blob sizes asked of git`);
  }
  const unprovenAt = new Set<number>();
  for (const item of sized.unproven) unprovenAt.add(files.positions[item]);
  let unproven: RelPath[] = [];
  if (unprovenAt.size > 0) {
    // Named from the same file (a replaced one is not proven with these positions).
    const named = walkIndexFile(indexFile, { namesAt: unprovenAt });
    if (named?.identity !== walked.identity) return null;
    unproven = named.names;
  }
  // The table keeps the sizes of the blobs an index names. Made from a kept table, it only gains
  // those git was just asked for, at its end: rewriting 100k records cost a snapshot after each
  // `git add` ~20 ms. Once what it holds beyond this index's blobs outgrows them, it is written
  // anew with this index's only, so it stays within twice the index's size.
  const keptRecords = cachedSizes === null ? null : sizeTableRecords(cachedSizes);
  if (keptRecords !== null && asked !== null && keptRecords + asked.length <= 2 * files.count + 1024) {
    await appendSizes(sizesFile, ids, sizes, asked).catch(() => {});
  } else {
    await writeSizes(sizesFile, ids, sizes).catch(() => {});
  }
  await fs.rm(path.join(paths.dir, "blob-sizes.json"), { force: true }).catch(() => {}); // earlier versions' table
  const proof: ProofCache = { checksum: madeFrom, unproven, ...(unchanged ? { file: identity! } : {}) };
  await writeFileAtomic(cacheFile, JSON.stringify(proof), 0o600, false).catch(() => {});
  return unproven;
}
