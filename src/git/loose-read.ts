import { readFileSync } from "node:fs";
import { nodeCrypto } from "../util/crypto.js";
import { zlib } from "../util/zlib.js";
import type { ObjectType } from "./objects.js";

/**
 * The content of an object of `type` stored loose in `objectsDir`, read and checked from Node
 * (its id is the hash of what it holds): one object this tool wrote itself needs no git process.
 * Null when it is not there loose (packed since, say), is of another type, or does not check out:
 * the caller then asks git, which says what is wrong.
 */
export function readLooseObject(objectsDir: string, oid: string, type: ObjectType): Buffer | null {
  const object = readLoose(objectsDir, oid);
  return object?.type === type ? object.content : null;
}

/** A loose object of any type, read and checked from Node; null as for `readLooseObject`. */
export function readLoose(objectsDir: string, oid: string): { type: string; content: Buffer } | null {
  let raw: Buffer;
  try {
    raw = zlib().inflateSync(readFileSync(`${objectsDir}/${oid.slice(0, 2)}/${oid.slice(2)}`));
  } catch {
    return null;
  }
  const header = raw.indexOf(0);
  const space = raw.indexOf(0x20);
  if (header === -1 || space === -1 || space > header) return null;
  const type = raw.toString("latin1", 0, space);
  if (raw.toString("latin1", space + 1, header) !== String(raw.length - header - 1)) return null;
  if (nodeCrypto().createHash("sha1").update(raw).digest("hex") !== oid) return null;
  return { type, content: raw.subarray(header + 1) };
}
