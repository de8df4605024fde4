import { nodeCrypto } from "../util/crypto.js";
import fs from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { ownedPrivately } from "../util/private-file.js";

/**
 * V8's code cache for the command-line bundle: its compiled form, so a command skips parsing and
 * compiling ~360 KB of JavaScript. The cache is code, so only a file this user owns in a directory
 * this user owns, neither writable by anyone else, is ever read.
 *
 * A cache holds what the runs that wrote it compiled, and V8 compiles a function only when it is
 * first called: the first run after an upgrade may be a `--version` or a hook event with nothing
 * to do. So the first few runs each rewrite it, adding what they used; after that it is only read.
 * The file is one byte (how many runs have written it) followed by V8's data.
 */

/** Any non-empty value turns the cache off. */
export const CODE_CACHE_OFF = "GHOSTCOMMIT_NO_CODE_CACHE";

/** How many runs write the cache. */
export const WRITING_RUNS = 4;

/** How many caches to keep (several installed versions or Node versions may take turns). */
const KEEP = 4;

export interface CodeCache {
  data: Buffer;
  /** How many runs have written it. */
  runs: number;
}

/** What the built loader knows of the bundle built with it, and what the file holds now. */
export interface BuiltBundle {
  /** The bundle's SHA-256 when it was built. */
  digest: string;
  size: number;
  mtimeMs: number;
}

/**
 * The cache file for `source` under this Node and CPU. A new bundle or a new Node gets a new file,
 * so a stale cache is never even offered to V8, which checks only a source's length. A bundle
 * built with its loader is named by its build digest (hashing 400 KB at every start would load
 * `node:crypto`, which most commands and hooks need no other part of) with its size and time,
 * which a later edit of the file (a patch of the installed package) changes.
 */
export function codeCacheFile(source: Buffer, built?: BuiltBundle, use: CacheUse = "command"): string {
  const key = built
    ? `${built.digest.slice(0, 20)}-${built.size.toString(36)}-${Math.trunc(built.mtimeMs).toString(36)}`
    : nodeCrypto().createHash("sha256").update(source).digest("hex").slice(0, 32);
  const kind = use === "hook" ? "-hook" : "";
  return path.join(dataHome(), "cache", `cli-${key}-${process.version}-${process.arch}${kind}.v8`);
}

/**
 * Who runs the bundle: an agent's hook event or a command. Each has a cache of its own, written by
 * its own first runs: V8 reads a whole cache at every start, and a hook would otherwise read the
 * command line's (commander, the commands) whenever a command wrote it last, and a command
 * compile what a hook's cache lacks. A hook event of a new path read from a cache commands wrote
 * took 206 against 193 ms (CPU 201 against 187 ms, medians of 30 alternating rounds).
 */
export type CacheUse = "hook" | "command";

/** The cache, or why there is none to use. */
export function readCodeCache(file: string): CodeCache | "absent" | "untrusted" {
  let fd: number | undefined;
  try {
    const dir = fs.lstatSync(path.dirname(file));
    if (!dir.isDirectory() || !ownedPrivately(dir)) return "untrusted";
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || !ownedPrivately(stat)) return "untrusted";
    const bytes = fs.readFileSync(fd);
    return bytes.length > 1 ? { runs: bytes[0], data: bytes.subarray(1) } : "absent";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "absent" : "untrusted";
  } finally {
    if (fd !== undefined) fs.close(fd, () => {});
  }
}

/**
 * Writes the cache atomically (a temp file renamed over it) as a 0600 file in a 0700 directory.
 * It never creates the data home itself: a command that stored nothing leaves nothing behind.
 * Returns whether it was written; every failure is silent (the cache only saves time).
 */
export function writeCodeCache(file: string, cache: CodeCache): boolean {
  const dir = path.dirname(file);
  const temp = `${file}.${process.pid}.tmp`;
  try {
    if (!fs.existsSync(path.dirname(dir))) return false;
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory() || !ownedPrivately(stat)) return false;
    fs.writeFileSync(temp, Buffer.concat([Buffer.of(Math.min(cache.runs, 255)), cache.data]), {
      mode: 0o600,
      flag: "wx",
    });
    fs.renameSync(temp, file);
  } catch {
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // nothing was left behind, or nothing can be removed
    }
    return false;
  }
  pruneOldCaches(dir, path.basename(file));
  return true;
}

/** Keeps the newest few caches: each upgrade of ghostcommit or Node leaves one behind. */
function pruneOldCaches(dir: string, current: string): void {
  try {
    const old = fs
      .readdirSync(dir)
      .filter((name) => name.startsWith("cli-") && name.endsWith(".v8") && name !== current)
      .map((name) => ({ name, mtime: fs.lstatSync(path.join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const { name } of old.slice(KEEP - 1)) fs.rmSync(path.join(dir, name), { force: true });
  } catch {
    // another process pruned at the same time; the next write tries again
  }
}
