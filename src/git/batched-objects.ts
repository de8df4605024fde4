import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { deflateObject, LooseObjectWriter, SYNC_BYTES } from "./loose-objects.js";
import { type ObjectType, objectId } from "./objects.js";
import { encodePack, type PackEntry, PackLookup } from "./packs.js";

/** A batch of at least this many objects is written as one pack, whatever the store. */
const PACK_ALWAYS = 256;
/** In a new store (no fan-out directory yet) a batch of this many is packed: nearly every loose object would also make a directory. */
const PACK_IN_NEW_STORE = 16;
/** Held objects are written out once they add up to this many bytes. */
const BATCH_BYTES = 32 * 1024 * 1024;

/**
 * An object writer for one capture: small objects are held until `flush`, then written as one
 * pack when there are many of them (a new store's first capture, a turn that added hundreds of
 * files), loose otherwise. A loose object costs a file, a rename and often a directory (~0.4 ms
 * each on a common disk), a pack two files. Objects wait in memory only until the capture ends:
 * `flush` must run before anything outside this process needs them (a commit's ref, git).
 */
export class BatchingObjectWriter extends LooseObjectWriter {
  private held = new Map<string, PackEntry>();
  private heldBytes = 0;
  private readonly packs: PackLookup;

  constructor(objectsDir: string) {
    super(objectsDir);
    this.packs = new PackLookup(`${this.objectsDir}/pack`);
  }

  override async write(type: ObjectType, content: Buffer): Promise<string> {
    if (content.length > SYNC_BYTES) return super.write(type, content);
    const oid = objectId(type, content);
    if (this.held.has(oid) || this.freshenLoose(oid) || this.packs.freshen(oid)) return oid;
    this.held.set(oid, { oid, type, content });
    this.heldBytes += content.length;
    if (this.heldBytes >= BATCH_BYTES) this.flush();
    return oid;
  }

  override async freshen(oid: string): Promise<boolean> {
    return this.held.has(oid) || (await super.freshen(oid)) || this.packs.freshen(oid);
  }

  /** Writes the held objects: one pack when they are many, loose otherwise. */
  flush(): void {
    if (this.held.size === 0) return;
    const entries = [...this.held.values()];
    if (entries.length >= PACK_ALWAYS || (entries.length >= PACK_IN_NEW_STORE && this.storeIsNew())) {
      this.writePack(entries);
    } else {
      for (const { oid, type, content } of entries) {
        this.storeLoose(
          oid,
          deflateObject(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])),
        );
      }
    }
    this.held.clear();
    this.heldBytes = 0;
  }

  /** No fan-out directory and no pack of the store's own (linked .keep packs are the user's). */
  private storeIsNew(): boolean {
    const hexDir = /^[0-9a-f]{2}$/;
    let names: string[] = [];
    try {
      names = readdirSync(this.objectsDir);
    } catch {
      return true;
    }
    if (names.some((name) => hexDir.test(name))) return false;
    let packs: string[] = [];
    try {
      packs = readdirSync(`${this.objectsDir}/pack`);
    } catch {
      return true;
    }
    const kept = new Set(packs.filter((name) => name.endsWith(".keep")).map((name) => name.slice(0, -5)));
    return !packs.some((name) => name.endsWith(".idx") && !kept.has(name.slice(0, -4)));
  }

  /**
   * The pack first, then its index, each through a temp file: git sees a pack only once its
   * index is there, so a crash leaves at worst a pack without index, which git ignores.
   */
  private writePack(entries: PackEntry[]): void {
    const { pack, index, name } = encodePack(entries);
    const dir = `${this.objectsDir}/pack`;
    mkdirSync(dir, { recursive: true, mode: this.dirMode });
    const temp = `${dir}/tmp_pack_gc_${randomBytes(6).toString("hex")}`;
    const packFile = `${dir}/pack-${name}.pack`;
    try {
      writeFileSync(temp, pack, { mode: this.fileMode, flag: "wx" });
      renameSync(temp, packFile);
      writeFileSync(temp, index, { mode: this.fileMode, flag: "wx" });
      renameSync(temp, `${dir}/pack-${name}.idx`);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    this.packs.add(packFile, index);
  }
}
