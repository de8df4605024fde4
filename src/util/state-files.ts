import { randomHex } from "./crypto.js";
import {
  closeSync,
  promises as fs,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writevSync,
} from "node:fs";
import { writeFileSynced } from "./durable.js";
import { fsError } from "../errors.js";

/** Small state files: written atomically, read as JSON with a fallback. */

/**
 * Writes a file atomically: a reader sees the old content or the new, never a torn one. Private
 * (0600) unless told otherwise: the store's files describe the user's files. `flush`: its bytes
 * reach the disk before the rename (off only for caches, which a crash may lose). A cache is
 * written synchronously (four thread-pool trips otherwise); a flush is waited for off the main
 * thread, where other work can go on meanwhile.
 */
export async function writeFileAtomic(
  file: string,
  content: string | Buffer | readonly Buffer[],
  mode = 0o600,
  flush = true,
): Promise<void> {
  const temp = `${file}.tmp-${process.pid}-${randomHex(4)}`;
  if (!flush) {
    try {
      if (typeof content === "string" || Buffer.isBuffer(content)) writeFileSync(temp, content, { mode });
      else writePartsSync(temp, content, mode);
      renameSync(temp, file);
    } catch (error) {
      rmSync(temp, { force: true }); // a full disk leaves no half-written temp behind
      throw fsError(error, "write", file);
    }
    return;
  }
  try {
    await writeFileSynced(
      temp,
      typeof content === "string" || Buffer.isBuffer(content) ? content : Buffer.concat(content),
      mode,
    );
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw fsError(error, "write", file); // which file, not only "no space left"
  }
}

/**
 * Writes a new file from parts, in one call where the system takes them all: joining megabytes
 * into one buffer first costs more in fresh memory than the write itself.
 */
function writePartsSync(file: string, parts: readonly Buffer[], mode: number): void {
  const fd = openSync(file, "wx", mode);
  try {
    let left = parts.filter((part) => part.length > 0);
    while (left.length > 0) {
      let written = writevSync(fd, left);
      // A short write: what is left of the part it stopped in, and the parts after it.
      const rest: Buffer[] = [];
      for (const part of left) {
        if (written >= part.length) written -= part.length;
        else {
          rest.push(part.subarray(written));
          written = 0;
        }
      }
      left = rest;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and parses a JSON state file; a missing or damaged file, or one whose content `valid`
 * rejects (valid JSON of the wrong shape, e.g. `null`), yields the fallback. State files are
 * caches: a bad one must cost speed, never a snapshot. Read synchronously: a command reads a
 * dozen of these small files, and a promise read is four thread-pool trips (open, stat, read,
 * close), each a wake-up of the main thread.
 */
export async function readJson<T>(
  file: string,
  fallback: T,
  valid: (value: unknown) => boolean = isPlainObject,
): Promise<T> {
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    return valid(value) ? (value as T) : fallback;
  } catch {
    return fallback;
  }
}

/** A JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
