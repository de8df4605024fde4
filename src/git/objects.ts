import { createHash, randomBytes } from "node:crypto";
import {
  createReadStream,
  existsSync,
  promises as fs,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createDeflate, deflateSync } from "node:zlib";
import type { RelPath } from "../paths.js";

/** Git object ids and the loose-object format, written from Node so a snapshot needs no extra git process. */

export type ObjectType = "blob" | "tree" | "commit";

/** Objects up to this size are read, compressed and written with synchronous calls. */
const SYNC_BYTES = 256 * 1024;

export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Entry modes git stores. */
export const MODE = {
  file: "100644",
  exec: "100755",
  link: "120000",
  tree: "40000",
  gitlink: "160000",
} as const;

/**
 * zlib at its default level, as git writes, with the window and hash table no larger than the
 * object needs: at zlib's defaults each stream allocates and clears ~256 KB, which was most of the
 * cost of compressing a tree or a small file (~0.15 ms apiece, ~90 of them in a snapshot). With
 * the window covering the whole object every match is still in reach; any zlib reader (git's
 * included) accepts a smaller window than its own.
 */
export function deflateObject(framed: Buffer): Buffer {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(framed.length + 262))));
  return deflateSync(framed, { windowBits, memLevel: Math.min(8, windowBits - 7) });
}

export function objectId(type: ObjectType, content: Buffer): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/**
 * Writes loose objects into one objects directory, atomically (temp file + rename). Objects are
 * as private as their directory: owner-only in a private store (they hold file contents), the
 * usual read-only-for-all in a repository that is not.
 */
export class LooseObjectWriter {
  private readonly fileMode: number;
  private readonly dirMode: number;

  /** `objectsDir` normalized, with a trailing slash: object paths are built by concatenation. */
  private readonly base: string;

  constructor(readonly objectsDir: string) {
    this.base = `${path.resolve(objectsDir)}/`;
    let open = false;
    try {
      open = (statSync(objectsDir).mode & 0o077) !== 0;
    } catch {
      // not there yet: private
    }
    this.fileMode = open ? 0o444 : 0o400;
    this.dirMode = open ? 0o777 : 0o700;
  }

  private objectPath(oid: string): string {
    // Concatenated: path.join normalizes every character, which is felt cold, ~100 times a snapshot.
    return `${this.base}${oid.slice(0, 2)}/${oid.slice(2)}`;
  }

  /** True if the object is already stored loose here; refreshes its mtime so a concurrent prune keeps it. */
  async freshen(oid: string): Promise<boolean> {
    const now = new Date();
    try {
      utimesSync(this.objectPath(oid), now, now); // sync: one syscall, cheaper than a thread-pool trip
      return true;
    } catch {
      return false;
    }
  }

  /** Fan-out directories known to exist (one listing, then one mkdir for each new one). */
  private knownDirs: Set<string> | null = null;

  /** The object's fan-out directory, made if it is not there yet. */
  private fanOutDir(oid: string): string {
    if (!this.knownDirs) {
      let names: string[] = [];
      try {
        names = readdirSync(this.objectsDir);
      } catch {
        // not there yet: mkdir makes it
      }
      this.knownDirs = new Set(names);
    }
    const name = oid.slice(0, 2);
    const dir = `${this.base}${name}`;
    if (!this.knownDirs.has(name)) {
      mkdirSync(dir, { recursive: true, mode: this.dirMode });
      this.knownDirs.add(name);
    }
    return dir;
  }

  /** Temp names: one random part per writer, then a counter (a syscall less per object). */
  private readonly tempPrefix = `tmp_obj_gc_${randomBytes(6).toString("hex")}_`;
  private tempCount = 0;

  private tempIn(dir: string): string {
    return `${dir}/${this.tempPrefix}${this.tempCount++}`;
  }

  private async place(oid: string, write: (tempPath: string) => Promise<void>): Promise<void> {
    if (await this.freshen(oid)) return;
    const dir = this.fanOutDir(oid);
    const temp = this.tempIn(dir);
    try {
      await write(temp);
      await fs.rename(temp, this.objectPath(oid));
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }

  /**
   * Stores an object held in memory; returns its id. Small objects (trees, commits, most edited
   * files) use synchronous calls: a thread-pool round trip per syscall cost more than the I/O.
   */
  async write(type: ObjectType, content: Buffer): Promise<string> {
    const oid = objectId(type, content);
    const framed = () => Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
    if (content.length > SYNC_BYTES) {
      await this.place(oid, (temp) =>
        fs.writeFile(temp, deflateObject(framed()), { mode: this.fileMode, flag: "wx" }),
      );
      return oid;
    }
    const target = this.objectPath(oid);
    // Checked first (a failed utimes throws, and compressing would be wasted): most trees and
    // unchanged files of a later snapshot are stored already.
    if (existsSync(target)) {
      try {
        const now = new Date();
        utimesSync(target, now, now); // refresh it so a concurrent prune keeps it
        return oid;
      } catch {
        // removed meanwhile: store it again
      }
    }
    const body = deflateObject(framed());
    const dir = this.fanOutDir(oid);
    const temp = this.tempIn(dir);
    try {
      try {
        writeFileSync(temp, body, { mode: this.fileMode, flag: "wx" });
      } catch (error) {
        // Listed, then removed by a prune of empty fan-out directories (git gc in the repo store).
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        mkdirSync(dir, { recursive: true, mode: this.dirMode });
        writeFileSync(temp, body, { mode: this.fileMode, flag: "wx" });
      }
      renameSync(temp, target);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    return oid;
  }

  /**
   * Stores a regular file's bytes as a blob, streaming large files. Returns null when the
   * file changed size while being read (the caller rescans it).
   */
  async writeFileBlob(filePath: Buffer | string, size: number): Promise<string | null> {
    if (size <= 8 * 1024 * 1024) {
      // Small files (most edited ones) are read synchronously, as `write` stores them: promise
      // readFile makes four thread-pool trips (open, fstat, read, close) per file.
      const content = size <= SYNC_BYTES ? readFileSync(filePath) : await fs.readFile(filePath);
      if (content.length !== size) return null;
      return this.write("blob", content);
    }
    const dir = path.join(this.objectsDir, "incoming");
    await fs.mkdir(dir, { recursive: true, mode: this.dirMode });
    const temp = path.join(dir, `tmp_obj_gc_${randomBytes(6).toString("hex")}`);
    const hash = createHash("sha1");
    const header = Buffer.from(`blob ${size}\0`);
    hash.update(header);
    let seen = 0;
    const deflate = createDeflate();
    deflate.write(header);
    const handle = await fs.open(temp, "wx", this.fileMode);
    try {
      const source = createReadStream(filePath);
      source.on("data", (chunk) => {
        const bytes = chunk as Buffer;
        seen += bytes.length;
        hash.update(bytes);
      });
      const sink = handle.createWriteStream();
      await pipeline(source, deflate, sink);
      if (seen !== size) {
        await fs.rm(temp, { force: true });
        return null;
      }
      const oid = hash.digest("hex");
      if (await this.freshen(oid)) {
        await fs.rm(temp, { force: true });
        return oid;
      }
      await fs.mkdir(path.join(this.objectsDir, oid.slice(0, 2)), { recursive: true, mode: this.dirMode });
      await fs.rename(temp, this.objectPath(oid));
      return oid;
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    } finally {
      await handle.close().catch(() => {});
    }
  }
}

/** One entry of a tree object. `name` is a single path component (binary string). */
export interface TreeEntry {
  mode: string;
  name: RelPath;
  oid: string;
}

const HEX_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * Parses the binary body of a tree object. Read as one binary string (a char per byte): one
 * conversion per tree instead of three per entry.
 */
export function parseTree(body: Buffer): TreeEntry[] {
  const text = body.toString("latin1");
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < text.length) {
    const space = text.indexOf(" ", at);
    const nul = text.indexOf("\0", space);
    const mode = text.slice(at, space);
    let oid = "";
    for (let i = nul + 1; i < nul + 21; i++) oid += HEX_BYTE[text.charCodeAt(i)];
    entries.push({ mode: mode === "040000" ? MODE.tree : mode, name: text.slice(space + 1, nul), oid });
    at = nul + 21;
  }
  return entries;
}

/**
 * Serializes entries (any order) into a tree object body, in git's order: bytewise by name, a
 * directory compared as if its name ended in '/'. Names are binary strings (one char per byte),
 * so comparing them as strings compares bytes.
 */
export function serializeTree(entries: TreeEntry[]): Buffer {
  const keyed = entries.map((entry) => ({
    entry,
    key: entry.mode === MODE.tree ? `${entry.name}/` : entry.name,
  }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  let size = 0;
  for (const { entry } of keyed) size += entry.mode.length + 1 + entry.name.length + 1 + 20;
  const body = Buffer.allocUnsafe(size);
  let at = 0;
  for (const { entry } of keyed) {
    at += body.write(entry.mode, at, "latin1");
    body[at++] = 0x20;
    at += body.write(entry.name, at, "latin1");
    body[at++] = 0;
    at += body.write(entry.oid, at, "hex");
  }
  return body;
}

/** Builds a commit object body. Time is in seconds; identity is fixed so user config never leaks in. */
export function serializeCommit(fields: {
  tree: string;
  parents: string[];
  time: number;
  message: string;
}): Buffer {
  const who = `ghostcommit <ghostcommit@localhost> ${fields.time} +0000`;
  const lines = [
    `tree ${fields.tree}`,
    ...fields.parents.map((p) => `parent ${p}`),
    `author ${who}`,
    `committer ${who}`,
  ];
  return Buffer.from(`${lines.join("\n")}\n\n${fields.message}`, "utf8");
}

/** The root tree named by a commit object's body; null when the body names none. */
export function treeOfCommit(body: Buffer | string): string | null {
  const text = typeof body === "string" ? body : body.subarray(0, 46).toString("latin1");
  return /^tree ([0-9a-f]{40})/.exec(text)?.[1] ?? null;
}
