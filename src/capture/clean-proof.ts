import path from "node:path";
import { promises as fs } from "node:fs";
import { runGit, splitNul } from "../git/exec.js";
import { indexEntriesDigest, parseIndex } from "../git/index-file.js";
import type { RelPath } from "../paths.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { trace } from "../util/trace.js";
import type { Conversion } from "./conversion.js";

/** What one index proved, kept until the user's git writes another index. */
interface ProofCache {
  checksum: string;
  unproven: RelPath[];
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

/** Blob sizes by id (a blob's size never changes), read only when the index changed. */
function isSizes(value: unknown): value is Record<string, number> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
  storeDir: string;
  readEnv: NodeJS.ProcessEnv;
  worktreeRoot: string;
  conversion: Conversion;
}): Promise<RelPath[] | null> {
  const { indexFile, storeDir, readEnv, worktreeRoot, conversion } = options;
  if (conversion.perFile === null) return null;
  const perFile =
    conversion.perFile.length === 0
      ? Promise.resolve([])
      : runGit(["-c", "core.fsmonitor=false", "ls-files", "-z", "--", ...conversion.perFile], {
          cwd: worktreeRoot,
          env: { GIT_LITERAL_PATHSPECS: "0", GIT_INDEX_FILE: indexFile, GIT_OPTIONAL_LOCKS: "0" },
        }).then((r) => splitNul(r.stdout).map((name) => name.toString("latin1")));
  const sizeMismatches = mismatchedSizes(indexFile, storeDir, readEnv);
  const [filtered, mismatched] = await Promise.all([perFile, sizeMismatches]);
  if (mismatched === null) return null;
  return [...new Set([...mismatched, ...filtered])];
}

async function mismatchedSizes(
  indexFile: string,
  storeDir: string,
  readEnv: NodeJS.ProcessEnv,
): Promise<RelPath[] | null> {
  const cacheFile = path.join(storeDir, STORE_FILES.cleanProof);
  const sizesFile = path.join(storeDir, STORE_FILES.blobSizes);
  const checksum = await indexEntriesDigest(indexFile);
  if (checksum === null) return [];
  const cached = await readJson<ProofCache | null>(cacheFile, null, isProofCache);
  if (cached?.checksum === checksum) return cached.unproven;
  trace("capture: clean proof made from the whole index");

  const data = await fs.readFile(indexFile).catch(() => null);
  const entries = data ? parseIndex(data) : null;
  if (entries === null) return null;
  const known = await readJson<Record<string, number>>(sizesFile, {}, isSizes);
  const sizes: Record<string, number> = {};
  const missing: string[] = [];
  for (const entry of entries) {
    if (typeof known[entry.oid] === "number") sizes[entry.oid] = known[entry.oid];
    else if (!(entry.oid in sizes)) {
      sizes[entry.oid] = -1;
      missing.push(entry.oid);
    }
  }
  if (missing.length > 0) {
    const result = await runGit(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"], {
      cwd: storeDir,
      env: readEnv,
      input: `${missing.join("\n")}\n`,
    });
    for (const line of result.stdout.toString("latin1").split("\n")) {
      const [oid, type, size] = line.split(" ");
      if (type === "blob" && size !== undefined) sizes[oid] = Number(size);
    }
  }
  // Symlinks are read as links, never converted: only regular files can differ.
  const unproven = entries
    .filter((e) => (e.mode & 0o170000) === 0o100000)
    .filter((e) => sizes[e.oid] < 0 || sizes[e.oid] % SIZE_WRAP !== e.statSize || sizes[e.oid] >= SIZE_WRAP)
    .map((e) => e.path);
  for (const oid of Object.keys(sizes)) if (sizes[oid] < 0) delete sizes[oid];
  await writeFileAtomic(sizesFile, JSON.stringify(sizes)).catch(() => {});
  await writeFileAtomic(cacheFile, JSON.stringify({ checksum, unproven })).catch(() => {});
  return unproven;
}
