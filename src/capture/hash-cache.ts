import type { BigIntStats } from "node:fs";
import path from "node:path";
import type { RelPath } from "../paths.js";
import { STORE_FILES, readJson, writeFileAtomic } from "../store/layout.js";

type CacheRow = [size: string, mtimeNs: string, ctimeNs: string, ino: string, oid: string];

/** A cache row of the right shape: stat fields and a blob id. */
export function isCacheRow(value: unknown): value is CacheRow {
  return (
    Array.isArray(value) &&
    value.length === 5 &&
    value.every((v) => typeof v === "string") &&
    /^[0-9a-f]{40}$/.test(value[4])
  );
}

/**
 * Remembers the blob id of files ghostcommit hashed itself (changed and untracked files, which
 * git's index does not cover), keyed by their stat data, so an unchanged file is read once.
 */
export class HashCache {
  private rows = new Map<RelPath, CacheRow>();
  private used = new Map<RelPath, CacheRow>();
  private readonly file: string;

  constructor(storeDir: string, name: string = STORE_FILES.hashCache) {
    this.file = path.join(storeDir, name);
  }

  async load(): Promise<void> {
    const data = await readJson<Record<string, unknown>>(this.file, {});
    // Rows of the wrong shape (a damaged file) are dropped: the file is simply hashed again.
    this.rows = new Map(
      Object.entries(data).filter((entry): entry is [RelPath, CacheRow] => isCacheRow(entry[1])),
    );
  }

  private static key(stat: BigIntStats): [string, string, string, string] {
    return [String(stat.size), String(stat.mtimeNs), String(stat.ctimeNs), String(stat.ino)];
  }

  lookup(rel: RelPath, stat: BigIntStats): string | null {
    const row = this.rows.get(rel);
    if (!row) return null;
    const key = HashCache.key(stat);
    if (row[0] !== key[0] || row[1] !== key[1] || row[2] !== key[2] || row[3] !== key[3]) return null;
    this.used.set(rel, row);
    return row[4];
  }

  remember(rel: RelPath, stat: BigIntStats, oid: string): void {
    // A file modified within the file system's timestamp granularity of now could change again
    // without its stat data changing: never trust such a row (git's "racy clean" rule).
    const ageNs = BigInt(Date.now()) * 1_000_000n - stat.mtimeNs;
    if (ageNs < 3_000_000_000n) return;
    this.used.set(rel, [...HashCache.key(stat), oid]);
  }

  /** Keeps only the rows this run used, so the cache stays as small as the set of changed files. */
  async save(): Promise<void> {
    const unchanged =
      this.used.size === this.rows.size && [...this.used].every(([k, v]) => this.rows.get(k)?.[4] === v[4]);
    if (unchanged) return;
    // Unflushed, like the other caches: a lost or torn file only means files are hashed again,
    // and a flush here made every snapshot wait for the journal to commit its new objects.
    await writeFileAtomic(this.file, JSON.stringify(Object.fromEntries(this.used)), 0o600, false);
  }
}
