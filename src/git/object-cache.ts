import { nodeCrypto } from "../util/crypto.js";
import { readFileSync } from "node:fs";
import type { StoredObject } from "./cat-file.js";

/**
 * Trees and commits a capture read, kept for the next one in the store (objects never change, so
 * an entry is never stale): a later snapshot edits the same trees of HEAD along the paths an agent
 * keeps changing, and reading them here spares a `git cat-file` process and its round trips. Every
 * object taken from the file is hashed again before use, so a damaged file can only miss.
 *
 * The file: records of the id's 20 bytes, a type byte (t, c), the length (4 bytes) and the body.
 */
export class ObjectCache {
  private readonly stored = new Map<string, { type: string; at: number; length: number }>();
  private readonly data: Buffer;
  /** What this run read (from here or from git), written back by `serialize`. */
  private readonly used = new Map<string, StoredObject>();

  constructor(file: string) {
    let data = Buffer.alloc(0);
    try {
      data = readFileSync(file);
    } catch {
      // none yet
    }
    this.data = data;
    for (let at = 0; at + RECORD_HEAD <= data.length; ) {
      const length = data.readUInt32BE(at + 21);
      if (at + RECORD_HEAD + length > data.length) break; // torn: the rest is dropped
      const type = TYPES[String.fromCharCode(data[at + 20])];
      if (type) this.stored.set(data.toString("hex", at, at + 20), { type, at: at + RECORD_HEAD, length });
      at += RECORD_HEAD + length;
    }
  }

  /** The object, if the file holds it intact. */
  get(oid: string): StoredObject | null {
    const entry = this.stored.get(oid);
    if (!entry) return null;
    const content = Buffer.from(this.data.subarray(entry.at, entry.at + entry.length));
    const actual = nodeCrypto()
      .createHash("sha1")
      .update(`${entry.type} ${content.length}\0`)
      .update(content)
      .digest("hex");
    if (actual !== oid) {
      this.stored.delete(oid);
      return null;
    }
    const object = { type: entry.type, content };
    this.used.set(oid, object);
    return object;
  }

  /** Notes an object read from git, to be kept if it is a tree or a commit. */
  note(oid: string, object: StoredObject): void {
    if (object.type === "tree" || object.type === "commit") this.used.set(oid, object);
  }

  /** The file's new content: what this run used, up to a bound (null when nothing changed). */
  serialize(): Buffer | null {
    const same =
      this.used.size === this.stored.size && [...this.used.keys()].every((oid) => this.stored.has(oid));
    if (same || this.used.size === 0) return null;
    const parts: Buffer[] = [];
    let total = 0;
    for (const [oid, object] of this.used) {
      if (total + RECORD_HEAD + object.content.length > MAX_BYTES) break;
      const head = Buffer.alloc(RECORD_HEAD);
      head.write(oid, 0, 20, "hex");
      head[20] = object.type === "tree" ? 0x74 : 0x63;
      head.writeUInt32BE(object.content.length, 21);
      parts.push(head, object.content);
      total += RECORD_HEAD + object.content.length;
    }
    return Buffer.concat(parts);
  }
}

const RECORD_HEAD = 25;
const TYPES: Record<string, string> = { t: "tree", c: "commit" };
/** Beyond this the trees of a huge change are not worth keeping. */
const MAX_BYTES = 4 * 1024 * 1024;
