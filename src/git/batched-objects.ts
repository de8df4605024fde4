import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fsError } from "../errors.js";
import { captureTempName, LooseObjectWriter, SYNC_BYTES } from "./loose-objects.js";
import { type ObjectType, objectId } from "./objects.js";
import {
  encodePack,
  type PackEntry,
  PackLookup,
  type PackRecord,
  packCount,
  packRecord,
  readPackRecords,
} from "./packs.js";

/** A batch of at least this many objects is written as one pack, whatever the store. */
const PACK_ALWAYS = 256;
/** In a new store (no fan-out directory yet) a batch of this many is packed: nearly every loose object would also make a directory. */
const PACK_IN_NEW_STORE = 16;
/** In a private store (`packSmall`), a batch of this many is packed: two files instead of one each. */
const PACK_SMALL = 8;
/** Once a private store holds this many small packs, the next pack takes in their objects. */
const MERGE_AT = 16;
/** Up to this many bytes of them (a pack's offsets must stay below 2 GiB; memory stays small). */
const MERGE_BYTES = 64 * 1024 * 1024;
/** Held objects are written out once they add up to this many bytes. */
const BATCH_BYTES = 32 * 1024 * 1024;

/**
 * An object writer for one capture: small objects are held until `flush`, then written as one
 * pack when there are many of them, loose otherwise. A loose object costs a file, a rename and
 * often a directory (~0.4 ms each on a common disk), a pack two files. Objects wait in memory
 * only until the capture ends: `flush` must run before anything outside this process needs
 * them (a commit's ref, git).
 *
 * `packSmall` (a private store, whose packs are all ghostcommit's or linked .keep ones): every
 * capture of a few objects becomes a pack, and when small packs pile up the next one merges
 * them, as git's own gc would, so lookups stay cheap. In the user's repository, packs are left
 * to the user's git and only large batches are packed.
 */
export class BatchingObjectWriter extends LooseObjectWriter {
  private held = new Map<string, PackEntry>();
  private heldBytes = 0;
  private readonly lookup: PackLookup;

  constructor(
    objectsDir: string,
    private readonly packSmall = false,
  ) {
    super(objectsDir);
    this.lookup = new PackLookup(`${this.objectsDir}/pack`);
  }

  override async write(type: ObjectType, content: Buffer): Promise<string> {
    if (content.length > SYNC_BYTES) return super.write(type, content);
    const oid = objectId(type, content);
    // A private store's loose objects are git's (a plain directory's index) or borrowed: looking
    // for each new object among them cost a plain directory's later snapshot ~10 ms (every fan-out
    // directory exists there, and a failed look-up took ~100 us), to spare rare duplicates that a
    // pack may hold beside a loose copy, as git allows.
    if (this.held.has(oid) || (!this.packSmall && this.freshenLoose(oid)) || this.lookup.freshen(oid))
      return oid;
    this.held.set(oid, { oid, type, content });
    this.heldBytes += content.length;
    if (this.heldBytes >= BATCH_BYTES) this.flush();
    return oid;
  }

  override async freshen(oid: string): Promise<boolean> {
    // The packs first: a capture's objects are packed, and asking for a loose one costs a failed syscall.
    return this.held.has(oid) || this.lookup.freshen(oid) || (await super.freshen(oid));
  }

  /** Writes the held objects: one pack when they are many, loose otherwise. */
  flush(): void {
    if (this.held.size === 0) return;
    const entries = [...this.held.values()];
    const count = entries.length;
    if (
      count >= PACK_ALWAYS ||
      (this.packSmall && count >= PACK_SMALL) ||
      (count >= PACK_IN_NEW_STORE && this.storeIsNew())
    ) {
      this.writePack(entries.map(packRecord));
    } else {
      for (const { oid, type, content } of entries) this.storeLoose(oid, type, content);
    }
    this.held.clear();
    this.heldBytes = 0;
  }

  /** No fan-out directory and no pack of the store's own (linked .keep packs are the user's). */
  private storeIsNew(): boolean {
    const hexDir = /^[0-9a-f]{2}$/;
    for (const name of this.objectsDirEntries()) if (hexDir.test(name)) return false;
    return this.lookup.packs().length === 0;
  }

  /**
   * The pack first, then its index, each through a temp file: git sees a pack only once its
   * index is there, so a crash leaves at worst a pack without index, which git ignores. Packs
   * merged into this one are removed only after it is complete, index first.
   */
  private writePack(records: PackRecord[]): void {
    const merged = this.packSmall ? this.smallPacksToMerge(records) : new Set<string>();
    const { pack, index, name } = encodePack(records);
    const dir = `${this.objectsDir}/pack`;
    mkdirSync(dir, { recursive: true, mode: this.dirMode });
    const temp = `${dir}/${captureTempName("pack")}`;
    const packFile = `${dir}/pack-${name}.pack`;
    try {
      writeFileSync(temp, pack, { mode: this.fileMode, flag: "wx" });
      renameSync(temp, packFile);
      writeFileSync(temp, index, { mode: this.fileMode, flag: "wx" });
      renameSync(temp, `${dir}/pack-${name}.idx`);
    } catch (error) {
      rmSync(temp, { force: true });
      throw fsError(error, "write the objects of this capture to", dir);
    }
    merged.delete(packFile);
    for (const old of merged) {
      rmSync(old.replace(/\.pack$/, ".idx"), { force: true });
      rmSync(old, { force: true });
    }
    this.lookup.forget(merged);
    this.lookup.add(packFile, index);
    this.written.packs.push({ file: packFile, oids: records.map((r) => r.oid.toString("hex")) });
  }

  /**
   * When small packs have piled up, adds their objects to `records` (as stored, nothing
   * recompressed) and returns them for removal. Packs that cannot be read whole (git's own, with
   * deltas; damaged; removed meanwhile) stay as they are.
   */
  private smallPacksToMerge(records: PackRecord[]): Set<string> {
    const merged = new Set<string>();
    const all = this.lookup.packs();
    if (all.length < MERGE_AT) return merged;
    // Geometric, as git's `repack --geometric=2`: a pack more than twice the size of all the
    // smaller ones together is left as it is, so an old pack is rewritten only as often as the
    // store doubles, not every 16 captures.
    const packs = [...all].sort((a, b) => packCount(a.index) - packCount(b.index));
    let rest = packs.reduce((sum, p) => sum + packCount(p.index), 0);
    while (packs.length > 1) {
      const largest = packCount(packs[packs.length - 1].index);
      rest -= largest;
      if (largest <= 2 * rest) break;
      packs.pop();
    }
    if (packs.length < 2) return merged;
    const seen = new Set(records.map((r) => r.oid.toString("hex")));
    let bytes = records.reduce((sum, r) => sum + r.bytes.length, 0);
    for (const { pack, index } of packs) {
      let stored: PackRecord[] | null = null;
      try {
        const data = readFileSync(pack);
        if (bytes + data.length > MERGE_BYTES) continue;
        bytes += data.length;
        stored = readPackRecords(data, index);
      } catch {
        // removed meanwhile: another capture merged it
      }
      if (!stored) continue;
      for (const record of stored) {
        const oid = record.oid.toString("hex");
        if (seen.has(oid)) continue;
        seen.add(oid);
        records.push(record);
      }
      merged.add(pack);
    }
    return merged;
  }
}
