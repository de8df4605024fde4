import { createHash, randomBytes } from "node:crypto";
import {
  createReadStream,
  promises as fs,
  mkdirSync,
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
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Entry modes git stores. */
export const MODE = {
  file: "100644",
  exec: "100755",
  link: "120000",
  tree: "40000",
  gitlink: "160000",
} as const;

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

  constructor(readonly objectsDir: string) {
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
    return path.join(this.objectsDir, oid.slice(0, 2), oid.slice(2));
  }

  /** True if the object is already stored loose here; refreshes its mtime so a concurrent prune keeps it. */
  async freshen(oid: string): Promise<boolean> {
    const now = new Date();
    try {
      await fs.utimes(this.objectPath(oid), now, now);
      return true;
    } catch {
      return false;
    }
  }

  /** Fan-out directories known to exist, so each object costs one mkdir at most once. */
  private readonly knownDirs = new Set<string>();

  private async place(oid: string, write: (tempPath: string) => Promise<void>): Promise<void> {
    if (await this.freshen(oid)) return;
    const dir = path.join(this.objectsDir, oid.slice(0, 2));
    if (!this.knownDirs.has(dir)) {
      await fs.mkdir(dir, { recursive: true, mode: this.dirMode });
      this.knownDirs.add(dir);
    }
    const temp = path.join(dir, `tmp_obj_gc_${randomBytes(6).toString("hex")}`);
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
    const body = deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]));
    if (body.length > 256 * 1024) {
      await this.place(oid, (temp) => fs.writeFile(temp, body, { mode: this.fileMode, flag: "wx" }));
      return oid;
    }
    const target = this.objectPath(oid);
    const now = new Date();
    try {
      utimesSync(target, now, now); // present: refresh it so a concurrent prune keeps it
      return oid;
    } catch {
      // not stored loose yet
    }
    const dir = path.dirname(target);
    if (!this.knownDirs.has(dir)) {
      mkdirSync(dir, { recursive: true, mode: this.dirMode });
      this.knownDirs.add(dir);
    }
    const temp = path.join(dir, `tmp_obj_gc_${randomBytes(6).toString("hex")}`);
    try {
      writeFileSync(temp, body, { mode: this.fileMode, flag: "wx" });
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
      const content = await fs.readFile(filePath);
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

/** Parses the binary body of a tree object. */
export function parseTree(body: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    const mode = body.toString("latin1", at, space);
    const name = body.toString("latin1", space + 1, nul);
    const oid = body.toString("hex", nul + 1, nul + 21);
    entries.push({ mode: mode === "040000" ? MODE.tree : mode, name, oid });
    at = nul + 21;
  }
  return entries;
}

/** Git's tree order: bytewise by name, a directory compared as if its name ended in '/'. */
function treeSortKey(entry: TreeEntry): string {
  return entry.mode === MODE.tree ? `${entry.name}/` : entry.name;
}

/** Serializes entries (any order) into a tree object body. */
export function serializeTree(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => {
    const ka = treeSortKey(a);
    const kb = treeSortKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  const parts: Buffer[] = [];
  for (const entry of sorted) {
    parts.push(Buffer.from(`${entry.mode} `, "latin1"), Buffer.from(entry.name, "latin1"), Buffer.from([0]));
    parts.push(Buffer.from(entry.oid, "hex"));
  }
  return Buffer.concat(parts);
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
