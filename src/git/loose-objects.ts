import { nodeCrypto, randomHex } from "../util/crypto.js";
import {
  createReadStream,
  existsSync,
  promises as fs,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fsError } from "../errors.js";
import { type ObjectType, objectId, type WrittenObjects } from "./objects.js";
import { namesIn } from "../util/small-files.js";
import { alive } from "../util/process.js";
import { zlib } from "../util/zlib.js";
import { streamPromises } from "../util/stream-promises.js";
import { adopt, type ObjectSharing, objectSharing } from "./object-sharing.js";

/** Loose objects written from Node, so a snapshot needs no extra git process. */

/**
 * The temp files a capture writes objects to: its pack in objects/pack, a large file's blob in
 * objects/incoming, small blobs beside their final place. The writer's pid in the name tells one
 * left by a capture that was killed (as large as what it had written) from a live one's.
 */
export function captureTempName(kind: "pack" | "obj" | "idx"): string {
  return `tmp_${kind}_gc_${process.pid}_${randomHex(6)}`;
}

/**
 * Temp files of captures that died, in objects/pack and objects/incoming (the large ones), and of a
 * `doctor --repair` killed while it indexed a pack again (`idx`).
 */
export function deadCaptureTemps(objectsDir: string): string[] {
  return ["pack", "incoming"].flatMap((sub) =>
    namesIn(path.join(objectsDir, sub)).flatMap((name) => {
      const owner = /^tmp_(pack|obj|idx)_gc_(\d+)_/.exec(name);
      return owner && !alive(Number(owner[2])) ? [path.join(objectsDir, sub, name)] : [];
    }),
  );
}

/** Objects up to this size are read, compressed and written with synchronous calls. */
export const SYNC_BYTES = 256 * 1024;

/**
 * zlib at its default level, as git writes, with the window and hash table no larger than the
 * object needs: at zlib's defaults each stream allocates and clears ~256 KB, which was most of the
 * cost of compressing a tree or a small file (~0.15 ms apiece, ~90 of them in a snapshot). With
 * the window covering the whole object every match is still in reach; any zlib reader (git's
 * included) accepts a smaller window than its own.
 */
export function deflateObject(framed: Buffer): Buffer {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(framed.length + 262))));
  // The output buffer: zlib's default is 16 KiB of new memory per call, each page of it faulted
  // in; one that fits the object's output (stored blocks add a few bytes) and stays under 4 KiB
  // comes from Node's shared buffer pool. A larger object keeps the default.
  const chunkSize = framed.length + 64 < POOLED_BYTES ? framed.length + 64 : undefined;
  return zlib().deflateSync(framed, { windowBits, memLevel: Math.min(8, windowBits - 7), chunkSize });
}

/** Buffers below this size come from Node's shared pool (half its 8 KiB), not new memory. */
const POOLED_BYTES = 4096;

/** A loose object's file content: "<type> <size>\0" and the content, compressed. */
function looseBody(type: ObjectType, content: Buffer): Buffer {
  return deflateObject(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]));
}

/**
 * Writes loose objects into one objects directory, atomically (temp file + rename). Objects are
 * as private as their directory: owner-only in a private store (they hold file contents), the
 * usual read-only-for-all in a repository that is not.
 */
export class LooseObjectWriter {
  protected readonly fileMode: number;
  protected readonly dirMode: number;

  /** What this writer stored (not what it found stored already): a snapshot checks it is still there. */
  readonly written: WrittenObjects = { loose: [], packs: [] };

  /** `objectsDir` normalized, with a trailing slash: object paths are built by concatenation. */
  private readonly base: string;

  /** Set where objects must be made as a shared or another user's repository has them. */
  private readonly sharing: ObjectSharing | null = null;

  constructor(readonly objectsDir: string) {
    this.base = `${path.resolve(objectsDir)}/`;
    let open = false;
    try {
      const stat = statSync(objectsDir);
      open = (stat.mode & 0o077) !== 0;
      this.sharing = objectSharing(stat);
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

  /** What the objects directory holds (listed once per writer; fan-out dirs it makes are added). */
  protected objectsDirEntries(): Set<string> {
    if (!this.knownDirs) {
      this.knownDirs = new Set(namesIn(this.objectsDir)); // none yet: mkdir makes it
    }
    return this.knownDirs;
  }

  /** The object's fan-out directory, made if it is not there yet. */
  private fanOutDir(oid: string): string {
    const known = this.objectsDirEntries();
    const name = oid.slice(0, 2);
    const dir = `${this.base}${name}`;
    if (!known.has(name)) {
      mkdirSync(dir, { recursive: true, mode: this.dirMode });
      adopt(this.sharing, dir, "dir");
      known.add(name);
    }
    return dir;
  }

  /** Temp names: one random part per writer, then a counter (a syscall less per object). */
  private readonly tempPrefix = `${captureTempName("obj")}_`;
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
      adopt(this.sharing, temp, "file");
      await fs.rename(temp, this.objectPath(oid));
      this.written.loose.push(oid);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw fsError(error, "write an object to", dir);
    }
  }

  /**
   * Stores an object held in memory; returns its id. Small objects (trees, commits, most edited
   * files) use synchronous calls: a thread-pool round trip per syscall cost more than the I/O.
   */
  async write(type: ObjectType, content: Buffer): Promise<string> {
    const oid = objectId(type, content);
    if (content.length > SYNC_BYTES) {
      await this.place(oid, (temp) =>
        fs.writeFile(temp, looseBody(type, content), { mode: this.fileMode, flag: "wx" }),
      );
      return oid;
    }
    // Checked first (compressing would be wasted): most trees and unchanged files of a later
    // snapshot are stored already.
    if (this.freshenLoose(oid)) return oid;
    this.storeLoose(oid, type, content);
    return oid;
  }

  /** True if the object is stored loose here; refreshes its mtime so a concurrent prune keeps it. */
  protected freshenLoose(oid: string): boolean {
    // Not without its fan-out directory (listed once): most of a store's 256 are absent, and a
    // stat per new object cost a later snapshot milliseconds. One made since is only missed: the
    // object is then written again, which is harmless.
    if (!this.objectsDirEntries().has(oid.slice(0, 2))) return false;
    const target = this.objectPath(oid);
    if (!existsSync(target)) return false; // cheaper than a failed utimes, the common case for new objects
    try {
      const now = new Date();
      utimesSync(target, now, now);
      return true;
    } catch {
      return false; // removed meanwhile: store it again
    }
  }

  /** Stores an object loose (framed and compressed here). */
  protected storeLoose(oid: string, type: ObjectType, content: Buffer): void {
    const body = looseBody(type, content);
    const target = this.objectPath(oid);
    const dir = this.fanOutDir(oid);
    const temp = this.tempIn(dir);
    try {
      try {
        writeFileSync(temp, body, { mode: this.fileMode, flag: "wx" });
      } catch (error) {
        // Listed, then removed by a prune of empty fan-out directories (git gc in the repo store).
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        mkdirSync(dir, { recursive: true, mode: this.dirMode });
        adopt(this.sharing, dir, "dir");
        writeFileSync(temp, body, { mode: this.fileMode, flag: "wx" });
      }
      adopt(this.sharing, temp, "file");
      renameSync(temp, target);
      this.written.loose.push(oid);
    } catch (error) {
      rmSync(temp, { force: true });
      throw fsError(error, "write an object to", dir);
    }
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
    if ((await fs.mkdir(dir, { recursive: true, mode: this.dirMode })) !== undefined)
      adopt(this.sharing, dir, "dir");
    const temp = path.join(dir, captureTempName("obj"));
    const hash = nodeCrypto().createHash("sha1");
    const header = Buffer.from(`blob ${size}\0`);
    hash.update(header);
    let seen = 0;
    const deflate = zlib().createDeflate();
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
      await streamPromises().pipeline(source, deflate, sink);
      if (seen !== size) {
        await fs.rm(temp, { force: true });
        return null;
      }
      const oid = hash.digest("hex");
      if (await this.freshen(oid)) {
        await fs.rm(temp, { force: true });
        return oid;
      }
      this.fanOutDir(oid);
      adopt(this.sharing, temp, "file");
      await fs.rename(temp, this.objectPath(oid));
      this.written.loose.push(oid);
      return oid;
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    } finally {
      await handle.close().catch(() => {});
    }
  }
}
