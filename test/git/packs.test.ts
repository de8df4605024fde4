import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BatchingObjectWriter } from "../../src/git/batched-objects.js";
import { LooseObjectWriter } from "../../src/git/loose-objects.js";
import { MODE, serializeCommit, serializeTree } from "../../src/git/objects.js";
import { PackLookup, readPackRecords } from "../../src/git/packs.js";
import { Sandbox } from "../helpers/repo.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

/** A new bare repository: its objects directory, and git run in it. */
function bare(name: string) {
  const dir = sandbox.dir(name);
  sandbox.git(dir, "init", "-q", "--bare");
  const git = (args: string[], input?: Buffer | string) =>
    execFileSync("git", args, { cwd: dir, env: sandbox.env, input, maxBuffer: 1 << 28 }) as Buffer;
  const objects = path.join(dir, "objects");
  const files = (sub: string) => readdirSync(path.join(objects, sub));
  const packs = () => files("pack").filter((name) => name.endsWith(".pack"));
  const looseDirs = () => files(".").filter((name) => /^[0-9a-f]{2}$/.test(name));
  return { dir, git, objects, packs, looseDirs };
}

/** Writes `count` small blobs ("<label> <i>\n") and returns their ids. */
async function writeBlobs(writer: BatchingObjectWriter, label: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await writer.write("blob", Buffer.from(`${label} ${i}\n`)));
  return ids;
}

/** Bytes from a fixed seed, so the content and its compressed size are the same every run. */
function noise(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

describe("objects written as one pack", () => {
  it("a new store's batch becomes one pack that git verifies and reads back byte for byte", async () => {
    const repo = bare("new-store");
    const writer = new BatchingObjectWriter(repo.objects);
    // Sizes at each boundary of the pack header's size field (4 bits, then 7 more per byte), up
    // to the largest object held in memory (256 KiB), plus a tree and a commit naming them.
    const sizes = [0, 1, 15, 16, 17, 2047, 2048, 2049, 262_143, 262_144, 70_000, 3, 4, 5, 6, 7];
    const blobs: [string, Buffer][] = [];
    for (const [i, size] of sizes.entries()) {
      const content = noise(size, i + 1);
      blobs.push([await writer.write("blob", content), content]);
    }
    const tree = serializeTree(blobs.map(([oid], i) => ({ mode: MODE.file, name: `f${i}`, oid })));
    const treeId = await writer.write("tree", tree);
    const commit = serializeCommit({ tree: treeId, parents: [], time: 1_700_000_000, message: "m\n" });
    const commitId = await writer.write("commit", commit);
    expect(await writer.write("blob", blobs[3][1])).toBe(blobs[3][0]); // held: not written twice
    expect(repo.packs()).toEqual([]); // nothing on disk before the flush
    writer.flush();

    expect(repo.packs()).toHaveLength(1);
    expect(repo.looseDirs()).toEqual([]);
    const idx = path.join(repo.objects, "pack", repo.packs()[0].replace(/\.pack$/, ".idx"));
    const verified = repo.git(["verify-pack", "-v", idx]).toString();
    expect(verified).toMatch(/non delta: 18 objects/);
    for (const [oid, content] of blobs) {
      expect(oid).toBe(repo.git(["hash-object", "--stdin", "--no-filters"], content).toString().trim());
      expect(repo.git(["cat-file", "blob", oid]).equals(content)).toBe(true);
    }
    expect(repo.git(["cat-file", "tree", treeId]).equals(tree)).toBe(true);
    expect(repo.git(["cat-file", "commit", commitId]).equals(commit)).toBe(true);
    repo.git(["update-ref", "refs/heads/main", commitId]);
    repo.git(["fsck", "--strict", "--no-dangling"]);
    // git's own repack reads it as any pack
    repo.git(["repack", "-a", "-d", "-q"]);
    expect(repo.git(["cat-file", "blob", blobs[8][0]]).equals(blobs[8][1])).toBe(true);
  });

  it("a few objects in a store that has objects stay loose; hundreds become a pack", async () => {
    const repo = bare("used-store");
    await new LooseObjectWriter(repo.objects).write("blob", Buffer.from("already here\n"));
    const few = new BatchingObjectWriter(repo.objects);
    for (let i = 0; i < 40; i++) await few.write("blob", Buffer.from(`few ${i}\n`));
    few.flush();
    expect(repo.packs()).toEqual([]);
    expect(repo.git(["count-objects"]).toString()).toMatch(/^41 objects/);

    const many = new BatchingObjectWriter(repo.objects);
    for (let i = 0; i < 300; i++) await many.write("blob", Buffer.from(`many ${i}\n`));
    many.flush();
    expect(repo.packs()).toHaveLength(1);
    expect(repo.git(["count-objects"]).toString()).toMatch(/^41 objects/);
    const lastId = repo.git(["hash-object", "--stdin"], "many 299\n").toString().trim();
    expect(repo.git(["cat-file", "-p", lastId]).toString()).toBe("many 299\n");
    repo.git(["fsck", "--strict", "--unreachable", "--no-dangling"]);
  });

  it("a later writer finds packed objects instead of writing them again, and touches their pack", async () => {
    const repo = bare("lookup");
    const first = new BatchingObjectWriter(repo.objects);
    const ids = await writeBlobs(first, "packed", 20);
    first.flush();
    const [pack] = repo.packs();
    const packFile = path.join(repo.objects, "pack", pack);
    const old = new Date(Date.now() - 3600_000);
    utimesSync(packFile, old, old);

    const later = new BatchingObjectWriter(repo.objects);
    expect(await later.freshen(ids[7])).toBe(true); // a hash-cache hit stays a hit
    expect(statSync(packFile).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect(await later.write("blob", Buffer.from("packed 3\n"))).toBe(ids[3]);
    expect(await later.freshen("0".repeat(40))).toBe(false);
    later.flush();
    expect(repo.looseDirs()).toEqual([]); // nothing written twice
    expect(repo.packs()).toEqual([pack]);
  });

  it("in a private store a few objects make a pack; once 16 packs pile up, the next one takes in ours", async () => {
    const repo = bare("private");
    await new LooseObjectWriter(repo.objects).write("blob", Buffer.from("loose already\n"));
    const few = new BatchingObjectWriter(repo.objects, true);
    for (let i = 0; i < 5; i++) await few.write("blob", Buffer.from(`five ${i}\n`));
    few.flush();
    expect(repo.packs()).toEqual([]); // too few for a pack: loose

    // A pack git wrote with deltas (as its gc does) is never merged: it is not all whole objects.
    const base = noise(4000, 7);
    const similar = [0, 1, 2].map((i) => Buffer.concat([base, Buffer.from(`variant ${i}\n`)]));
    const deltaRepo = bare("deltas");
    const similarIds = similar.map((content) =>
      deltaRepo.git(["hash-object", "-w", "--stdin"], content).toString().trim(),
    );
    deltaRepo.git(
      ["pack-objects", "-q", "--window=10", "--depth=5", "objects/pack/pack"],
      `${similarIds.join("\n")}\n`,
    );
    for (const name of readdirSync(path.join(deltaRepo.objects, "pack"))) expect(name).toMatch(/^pack-/);
    for (const name of readdirSync(path.join(deltaRepo.objects, "pack"))) {
      copyFileSync(path.join(deltaRepo.objects, "pack", name), path.join(repo.objects, "pack", name));
    }
    const gitPack = repo.packs()[0];
    expect(
      repo
        .git(["verify-pack", "-v", path.join(repo.objects, "pack", gitPack.replace(".pack", ".idx"))])
        .toString(),
    ).toMatch(/chain length = 1/);

    const ids: string[] = [];
    for (let round = 0; round < 15; round++) {
      const writer = new BatchingObjectWriter(repo.objects, true);
      for (let i = 0; i < 8; i++)
        ids.push(await writer.write("blob", Buffer.from(`round ${round} object ${i}\n`)));
      writer.flush();
    }
    expect(repo.packs()).toHaveLength(16); // git's and 15 of ours
    const next = new BatchingObjectWriter(repo.objects, true);
    for (let i = 0; i < 8; i++) ids.push(await next.write("blob", Buffer.from(`merging ${i}\n`)));
    next.flush();
    expect(repo.packs()).toHaveLength(2); // git's, and one holding all of ours
    expect(repo.packs()).toContain(gitPack);
    const merged = repo.packs().find((name) => name !== gitPack)!;
    const verified = repo
      .git(["verify-pack", "-v", path.join(repo.objects, "pack", merged.replace(".pack", ".idx"))])
      .toString();
    expect(verified).toMatch(/non delta: 128 objects/);
    for (const [n, oid] of ids.entries()) {
      const expected = n < 120 ? `round ${Math.floor(n / 8)} object ${n % 8}\n` : `merging ${n - 120}\n`;
      expect(repo.git(["cat-file", "blob", oid]).toString()).toBe(expected);
    }
    for (const content of similar) {
      const oid = repo.git(["hash-object", "--stdin"], content).toString().trim();
      expect(repo.git(["cat-file", "blob", oid]).equals(content)).toBe(true);
    }
    repo.git(["fsck", "--strict", "--unreachable", "--no-dangling"]);

    // Geometric: a pack more than twice all smaller ones together is not rewritten by a merge.
    const big = new BatchingObjectWriter(repo.objects, true);
    for (let i = 0; i < 600; i++) await big.write("blob", Buffer.from(`big ${i}\n`));
    big.flush();
    const bigPack = repo.packs().find((name) => name !== gitPack && name !== merged)!;
    for (let round = 0; round < 13; round++) {
      const writer = new BatchingObjectWriter(repo.objects, true);
      for (let i = 0; i < 8; i++) await writer.write("blob", Buffer.from(`second ${round} ${i}\n`));
      writer.flush();
    }
    expect(repo.packs()).toHaveLength(16);
    const last = new BatchingObjectWriter(repo.objects, true);
    for (let i = 0; i < 8; i++) await last.write("blob", Buffer.from(`last ${i}\n`));
    last.flush();
    expect(repo.packs()).toHaveLength(3);
    expect(repo.packs()).toEqual(expect.arrayContaining([gitPack, bigPack]));
    const second = repo.packs().find((name) => name !== gitPack && name !== bigPack)!;
    const secondVerified = repo
      .git(["verify-pack", "-v", path.join(repo.objects, "pack", second.replace(".pack", ".idx"))])
      .toString();
    expect(secondVerified).toMatch(/non delta: 240 objects/); // 128 merged before, 13 × 8, and 8
    repo.git(["fsck", "--strict", "--unreachable", "--no-dangling"]);
  });

  it("a damaged pack (a flipped byte) is not merged: its records fail their CRC", async () => {
    const repo = bare("damaged-pack");
    const writer = new BatchingObjectWriter(repo.objects, true);
    for (let i = 0; i < 8; i++) await writer.write("blob", Buffer.from(`crc ${i}\n`.repeat(20)));
    writer.flush();
    const packFile = path.join(repo.objects, "pack", repo.packs()[0]);
    const index = readFileSync(packFile.replace(/\.pack$/, ".idx"));
    const pack = readFileSync(packFile);
    expect(readPackRecords(pack, index)).toHaveLength(8);
    const flipped = Buffer.from(pack);
    flipped[40] ^= 0x10;
    expect(readPackRecords(flipped, index)).toBeNull();
    expect(readPackRecords(pack.subarray(0, pack.length - 30), index)).toBeNull();
  });

  it("does not look into the user's packs a store links (.keep) nor a damaged index", async () => {
    const repo = bare("kept");
    const writer = new BatchingObjectWriter(repo.objects);
    const ids = await writeBlobs(writer, "kept", 20);
    writer.flush();
    const packDir = path.join(repo.objects, "pack");
    const base = repo.packs()[0].replace(/\.pack$/, "");
    expect(new PackLookup(packDir).find(ids[0])).toBe(path.join(packDir, `${base}.pack`));
    writeFileSync(path.join(packDir, `${base}.keep`), "");
    expect(new PackLookup(packDir).find(ids[0])).toBeNull();
    expect(new PackLookup(path.join(repo.dir, "nowhere")).find(ids[0])).toBeNull();
    // An index cut short (a full disk, a copy interrupted) is passed over, not read past its end.
    rmSync(path.join(packDir, `${base}.keep`));
    const idx = path.join(packDir, `${base}.idx`);
    chmodSync(idx, 0o600);
    writeFileSync(idx, readFileSync(idx).subarray(0, 8 + 1024 + 100));
    expect(new PackLookup(packDir).find(ids[19])).toBeNull();
  });

  it("finds every object of each pack by its fan-out table, and no object it lacks", async () => {
    const repo = bare("lookup");
    const packDir = path.join(repo.objects, "pack");
    const written: string[][] = [];
    for (const [label, count] of [
      ["many", 1500],
      ["few", 9],
    ] as const) {
      const writer = new BatchingObjectWriter(repo.objects, true);
      written.push(await writeBlobs(writer, label, count));
      writer.flush();
    }
    const lookup = new PackLookup(packDir);
    const packOf = new Map(written.map((ids) => [ids, lookup.find(ids[0])]));
    expect(new Set(packOf.values()).size).toBe(2);
    for (const ids of written) for (const id of ids) expect(lookup.find(id)).toBe(packOf.get(ids));
    // Ids beside those written: the first and last byte values, and one bit off each written id.
    const ids = written.flat();
    expect(ids.some((id) => id.startsWith("00")) && ids.some((id) => id.startsWith("ff"))).toBe(true);
    for (const id of [
      "00".repeat(20),
      "ff".repeat(20),
      ...ids.map((id) => `${id.slice(0, 39)}${(Number.parseInt(id[39], 16) ^ 1).toString(16)}`),
    ])
      if (!ids.includes(id)) expect(lookup.find(id)).toBeNull();
  });
});
