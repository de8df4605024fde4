import { nodeCrypto } from "../util/crypto.js";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { EOIE_BYTES, entriesEnd, identityOf, WINDOW_BYTES } from "./index-file.js";
import {
  HEADER,
  type IndexScan,
  type IndexSummary,
  SHA1_BYTES,
  scanResult,
  scanWindow,
  startScan,
} from "./index-entries.js";

/**
 * Walking an index file from Node, synchronously and through one small buffer: its entries
 * (`walkIndexFile`, shared by a capture's steps through `SharedIndexWalk`) and its extensions
 * (`indexExtensions`).
 */

/** What one walk of an index file found (see `walkIndexFile`). */
export interface IndexWalk {
  summary: IndexSummary;
  /** Its regular files, where asked for. */
  files: IndexScan | null;
  /** `indexEntriesDigest` of the bytes walked ("entries:…"), where asked for. */
  digest: string | null;
  /** The paths at the positions asked for, in index order. */
  names: string[];
  /** The identity of the file walked (see `fileIdentity`). */
  identity: string;
  /** The bodies of the extensions asked for (and the cache tree's) that the file has. */
  bodies: Map<string, Buffer>;
}

/** The extensions from `start` to `end` (where the checksum begins), by their 8-byte headers. */
function readExtensions(
  fd: number,
  start: number,
  end: number,
  wanted: ReadonlySet<string>,
): { signatures: Set<string>; bodies: Map<string, Buffer>; headers: Buffer[] } | null {
  const signatures = new Set<string>();
  const bodies = new Map<string, Buffer>();
  const headers: Buffer[] = [];
  for (let at = start; at < end; ) {
    const header = Buffer.alloc(8);
    if (at + 8 > end || readSync(fd, header, 0, 8, at) !== 8) return null;
    const length = header.readUInt32BE(4);
    if (at + 8 + length > end) return null;
    const signature = header.toString("latin1", 0, 4);
    signatures.add(signature);
    headers.push(header);
    if (wanted.has(signature)) {
      const body = Buffer.allocUnsafe(length);
      if (readSync(fd, body, 0, length, at + 8) !== length) return null;
      bodies.set(signature, body);
    }
    at += 8 + length;
  }
  return { signatures, bodies, headers };
}

/**
 * The bodies of the named extensions of an index ("TREE", "UNTR"), without walking its entries
 * where git recorded where they end ("EOIE", written with `index.recordEndOfIndexEntries`) and
 * that record's hash of the extension headers matches them; otherwise by walking the entries.
 * Null when the file cannot be read or is not understood.
 */
export function indexExtensions(file: string, names: ReadonlySet<string>): Map<string, Buffer> | null {
  const fd = openOrNull(file);
  if (fd === null) return null;
  try {
    const size = Number(fstatSync(fd).size);
    const signature = Buffer.alloc(4);
    readSync(fd, signature, 0, 4, 0);
    if (signature.toString("latin1") !== "DIRC") return null;
    if (size >= HEADER + EOIE_BYTES + SHA1_BYTES) {
      const eoie = Buffer.alloc(EOIE_BYTES);
      const eoieAt = size - SHA1_BYTES - EOIE_BYTES;
      const start = readSync(fd, eoie, 0, EOIE_BYTES, eoieAt) === EOIE_BYTES ? entriesEnd(eoie, size) : null;
      const found = start === null ? null : readExtensions(fd, start, eoieAt, names);
      if (found) {
        const hash = nodeCrypto().createHash("sha1");
        for (const header of found.headers) hash.update(header);
        if (hash.digest().equals(eoie.subarray(12))) return found.bodies;
      }
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
  return walkIndexFile(file, { extensionBodies: names })?.bodies ?? null;
}

function openOrNull(file: string): number | null {
  try {
    return openSync(file, "r");
  } catch {
    return null;
  }
}

/**
 * Walks an index file through one buffer of 256 KiB (larger only for an entry that does not fit
 * in it) instead of reading it whole: on the machines measured, a 10 MB index read whole took
 * ~31 ms, ~4 ms through the small buffer, and several times that beside a running status (10 MB
 * of fresh memory to fill). At once, on one descriptor: a file git replaces meanwhile (it only
 * ever renames a new one into place) is still read as it was, and `identity` names that file.
 * `known` is a digest already taken of the file with that identity: not taken again. Null for a
 * file that cannot be read or whose index is not understood (see `scanWindow`).
 */
export function walkIndexFile(
  file: string,
  options: {
    files?: boolean;
    digest?: boolean;
    namesAt?: ReadonlySet<number>;
    known?: { identity: string; digest: string } | null;
    windowBytes?: number;
    /** Extensions whose bodies are wanted (`bodies`), beside the cache tree's. */
    extensionBodies?: ReadonlySet<string>;
  } = {},
): IndexWalk | null {
  const fd = openOrNull(file);
  if (fd === null) return null;
  try {
    const stat = fstatSync(fd, { bigint: true });
    const identity = identityOf(stat)!;
    const size = Number(stat.size);
    const known = options.known?.identity === identity ? options.known.digest : null;
    const hash = options.digest && known === null ? nodeCrypto().createHash("sha1") : null;
    let buffer = Buffer.allocUnsafe(Math.max(HEADER, Math.min(size, options.windowBytes ?? WINDOW_BYTES)));
    const readAt = (position: number, length: number) =>
      buffer.subarray(0, readSync(fd, buffer, 0, Math.min(length, buffer.length), position));
    const header = readAt(0, HEADER);
    const state = startScan(header, size, options.files ?? false, options.namesAt ?? null);
    if (state === null) return null;
    hash?.update(header);
    for (;;) {
      const from = state.offset;
      const window = readAt(from, size - from);
      const walked = scanWindow(window, from, state);
      if (walked === null) return null;
      hash?.update(window.subarray(0, state.offset - from)); // the entries walked, each once
      if (walked === "done") break;
      if (state.offset === from) {
        // One entry longer than the buffer (a path of thousands of bytes), or a file cut short.
        if (buffer.length >= size) return null;
        buffer = Buffer.allocUnsafe(Math.min(size, buffer.length * 2));
      }
    }
    // The extensions, by their headers; only the bodies asked for are read.
    const wanted = new Set(["TREE", ...(options.extensionBodies ?? [])]);
    const found = readExtensions(fd, state.offset, size - SHA1_BYTES, wanted);
    // A split index keeps most entries in a shared file: its files are not understood here.
    if (found === null || (options.files && found.signatures.has("link"))) return null;
    const { signatures: extensions, bodies } = found;
    return {
      bodies,
      summary: {
        unusual: state.unusual,
        attributeFiles: state.attributeFiles,
        ghostignoreFiles: state.ghostignoreFiles,
        extensions,
        cacheTree: bodies.get("TREE") ?? null,
      },
      files: options.files ? scanResult(state) : null,
      digest: hash ? `entries:${hash.digest("hex")}` : options.digest ? known : null,
      names: state.names,
      identity,
    };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * One walk of your index, shared by the steps of a capture that need it: a first snapshot's
 * base count wants its cache tree and `.gitattributes` paths, its clean proof every file's blob
 * id and size. Where the proof is coming (`proofWanted`), the base count takes the proof's walk
 * rather than make another.
 */
export class SharedIndexWalk {
  private walked: IndexWalk | null | undefined;
  private summarized: IndexSummary | null | undefined;
  /** The clean proof will walk the file: `summary` then takes that walk. */
  proofWanted = false;

  constructor(readonly file: string) {}

  /** The walk the clean proof wants: files and the entries' digest (see `walkIndexFile`). */
  walk(known: { identity: string; digest: string } | null = null): IndexWalk | null {
    if (this.walked === undefined)
      this.walked = walkIndexFile(this.file, { files: true, digest: true, known });
    return this.walked;
  }

  /** What the base count wants of the file. */
  summary(): IndexSummary | null {
    if (this.summarized === undefined) {
      this.summarized =
        this.walked !== undefined || this.proofWanted
          ? (this.walk()?.summary ?? null)
          : (walkIndexFile(this.file)?.summary ?? null);
    }
    return this.summarized;
  }
}
