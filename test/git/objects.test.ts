import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  EMPTY_TREE,
  hexIdOf,
  MODE,
  objectId,
  parseTree,
  serializeTree,
  type TreeEntry,
} from "../../src/git/objects.js";
import { LooseObjectWriter } from "../../src/git/loose-objects.js";
import { readLooseObject } from "../../src/git/loose-read.js";
import { Sandbox } from "../helpers/repo.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());
const dir = sandbox.dir("objects");
sandbox.git(dir, "init", "-q", "--bare");
const git = (args: string[], input?: Buffer | string) =>
  execFileSync("git", args, { cwd: dir, env: sandbox.env, input }) as Buffer;

const oid = (n: number) => n.toString(16).padStart(40, "0");

describe("git objects written by ghostcommit", () => {
  it("serializes tree entries in git's order (a directory sorts as if named with a trailing /)", () => {
    const entries: TreeEntry[] = [
      { mode: MODE.tree, name: "a", oid: oid(1) },
      { mode: MODE.file, name: "a-b", oid: oid(2) },
      { mode: MODE.file, name: "a.b", oid: oid(3) },
      { mode: MODE.exec, name: "a0", oid: oid(4) },
      { mode: MODE.link, name: "B", oid: oid(5) },
      { mode: MODE.tree, name: "a.b.dir", oid: oid(6) },
      { mode: MODE.gitlink, name: "sub", oid: oid(7) },
      { mode: MODE.file, name: Buffer.from([0xc3, 0xa9]).toString("latin1"), oid: oid(8) },
      { mode: MODE.file, name: "new\nline", oid: oid(9) },
    ];
    const body = serializeTree([...entries].reverse());
    const mktreeInput = Buffer.concat(
      entries.map((e) =>
        Buffer.concat([
          Buffer.from(
            `${e.mode === MODE.tree ? "040000" : e.mode} ${e.mode === MODE.tree ? "tree" : e.mode === MODE.gitlink ? "commit" : "blob"} ${e.oid}\t`,
          ),
          Buffer.from(e.name, "latin1"),
          Buffer.from([0]),
        ]),
      ),
    );
    const expected = git(["mktree", "-z", "--missing"], mktreeInput).toString().trim();
    expect(objectId("tree", body)).toBe(expected);
    expect(git(["cat-file", "tree", expected]).equals(body)).toBe(true);
    expect(parseTree(body).map((e) => e.name)).toEqual(
      parseTree(git(["cat-file", "tree", expected])).map((e) => e.name),
    );
    expect(objectId("tree", serializeTree([]))).toBe(EMPTY_TREE);
    // Parsed entries keep their ids' bytes and are written back from them, byte for byte, beside
    // entries made anew (ids with bytes past 0x7f included).
    const parsed = parseTree(body);
    expect(serializeTree(parsed).equals(body)).toBe(true);
    const edited = parsed.map((e) =>
      e.name === "a0" ? { mode: e.mode, name: e.name, oid: "ff80".repeat(10) } : e,
    );
    edited.push({ mode: MODE.file, name: "z", oid: "7f".repeat(20) });
    const reparsed = parseTree(serializeTree(edited));
    expect(reparsed.find((e) => e.name === "a0")?.oid).toBe("ff80".repeat(10));
    expect(reparsed.find((e) => e.name === "z")?.oid).toBe("7f".repeat(20));
    expect(reparsed.filter((e) => e.name !== "a0" && e.name !== "z").map((e) => e.oid)).toEqual(
      parsed.filter((e) => e.name !== "a0").map((e) => e.oid),
    );
    // Parsed with their ids left as bytes: the same entries, each id spelled out on demand, and
    // the tree written back byte for byte.
    const lazy = parseTree(body, { hexIds: false });
    expect(lazy.every((e) => e.oid === "")).toBe(true);
    expect(lazy.map((e) => [e.mode, e.name, hexIdOf(e)])).toEqual(parsed.map((e) => [e.mode, e.name, e.oid]));
    expect(serializeTree(lazy).equals(body)).toBe(true);
    expect(hexIdOf({ mode: MODE.file, name: "n", oid: oid(3) })).toBe(oid(3));
    // A new name that sorts first, added last, still lands in git's order.
    edited.push({ mode: MODE.file, name: "A", oid: oid(10) });
    const names = parsed.map((e) => e.name);
    expect(parseTree(serializeTree(edited)).map((e) => e.name)).toEqual([
      "A",
      ...names.filter((name) => name < "z"),
      "z",
      ...names.filter((name) => name > "z"), // é: bytes past 0x7f
    ]);
  });

  it("computes blob ids like git hash-object and writes loose objects git can read", async () => {
    const writer = new LooseObjectWriter(path.join(dir, "objects"));
    const content = Buffer.from("line\r\nbinary\0bytes\xff", "latin1");
    const id = await writer.write("blob", content);
    expect(id).toBe(git(["hash-object", "--stdin", "--no-filters"], content).toString().trim());
    expect(git(["cat-file", "blob", id]).equals(content)).toBe(true);
    expect(await writer.write("blob", content)).toBe(id); // idempotent
  });

  it("reads back a loose object git wrote, and nothing it cannot vouch for", () => {
    // A repository of its own: the objects forged below would fail the fsck of the one shared here.
    const own = sandbox.dir("loose-read");
    sandbox.git(own, "init", "-q", "--bare");
    const objects = path.join(own, "objects");
    const content = Buffer.from(
      "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nmsg\n",
    );
    const id = execFileSync("git", ["hash-object", "-t", "commit", "-w", "--stdin"], {
      cwd: own,
      env: sandbox.env,
      input: content,
    })
      .toString()
      .trim();
    expect(readLooseObject(objects, id, "commit")?.equals(content)).toBe(true);
    expect(readLooseObject(objects, id, "blob")).toBeNull(); // another type
    expect(readLooseObject(objects, oid(7), "commit")).toBeNull(); // not there
    // A file under a name its content does not hash to (damaged, or renamed by hand).
    const forged = `${id.slice(0, 2)}${"f".repeat(38)}`;
    mkdirSync(path.join(objects, forged.slice(0, 2)), { recursive: true });
    const forgedFile = path.join(objects, forged.slice(0, 2), forged.slice(2));
    copyFileSync(path.join(objects, id.slice(0, 2), id.slice(2)), forgedFile);
    chmodSync(forgedFile, 0o444);
    expect(readLooseObject(objects, forged, "commit")).toBeNull();
    // Bytes that do not inflate.
    const broken = `${id.slice(0, 2)}${"e".repeat(38)}`;
    writeFileSync(path.join(objects, broken.slice(0, 2), broken.slice(2)), "not zlib");
    expect(readLooseObject(objects, broken, "commit")).toBeNull();
  });

  it("an object stored loose already is freshened, not written again; one whose fan-out directory came later is still stored", async () => {
    const objects = path.join(dir, "objects");
    const first = new LooseObjectWriter(objects);
    const kept = Buffer.from(`kept ${Date.now()}\n`);
    const id = await first.write("blob", kept);
    const file = path.join(objects, id.slice(0, 2), id.slice(2));
    const past = new Date(Date.now() - 3600_000);
    utimesSync(file, past, past);
    const { ino } = statSync(file);
    // A later writer (which lists the fan-out directories once) finds it: same file, now fresh.
    const later = new LooseObjectWriter(objects);
    await later.write("blob", Buffer.from("lists the objects directory\n"));
    expect(await later.write("blob", kept)).toBe(id);
    expect(statSync(file).ino).toBe(ino);
    expect(statSync(file).mtimeMs).toBeGreaterThan(past.getTime() + 1000);
    // Another process stores an object in a fan-out directory made after that listing: this
    // writer stores it again, harmlessly, and git reads it.
    let other = Buffer.alloc(0);
    let otherId = "";
    for (let n = 0; ; n++) {
      other = Buffer.from(`other ${n}\n`);
      otherId = objectId("blob", other);
      if (!existsSync(path.join(objects, otherId.slice(0, 2)))) break;
    }
    expect(await new LooseObjectWriter(objects).write("blob", other)).toBe(otherId);
    expect(await later.write("blob", other)).toBe(otherId);
    expect(git(["cat-file", "blob", otherId]).equals(other)).toBe(true);
  });

  it("compresses objects of every size so that git reads them back and fsck finds them sound", async () => {
    const writer = new LooseObjectWriter(path.join(dir, "objects"));
    // Sizes around each window the compressor picks, around the largest object whose output
    // buffer comes from Node's pool (4,021 bytes and its 10-byte header), and past the synchronous
    // limit (256 KiB); each as noise repeated once and, where odd, as noise alone (which zlib
    // stores as it is, a few bytes longer than the object).
    const sizes = [
      0, 1, 249, 250, 251, 762, 763, 3833, 3834, 4021, 4022, 4023, 16_000, 40_000, 70_000, 300_000,
    ];
    for (const size of sizes) {
      const content = Buffer.alloc(size);
      // Noise, then the same noise again: only a window spanning half the object finds the repeat.
      let seed = 2463534242;
      for (let i = 0; i < size; i++) {
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        content[i] = i < size / 2 || size % 2 === 1 ? seed & 0xff : content[i - Math.floor(size / 2)];
      }
      const id = await writer.write("blob", content);
      expect(id).toBe(git(["hash-object", "--stdin", "--no-filters"], content).toString().trim());
      expect(git(["cat-file", "blob", id]).equals(content)).toBe(true);
      if (size > 2000 && size / 2 <= 32_000 && size % 2 === 0) {
        // Within zlib's 32 KiB reach the window finds the repeat: half the bytes stored, as git stores them.
        const stored = readFileSync(path.join(dir, "objects", id.slice(0, 2), id.slice(2)));
        expect(stored.length).toBeLessThan(size * 0.6);
      }
    }
    git(["fsck", "--strict", "--unreachable", "--no-dangling"]);
  });

  it("streams a large file into a blob with the same id git computes", async () => {
    const writer = new LooseObjectWriter(path.join(dir, "objects"));
    const file = path.join(sandbox.home, "large.bin");
    const big = Buffer.alloc(9 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
    writeFileSync(file, big);
    const id = await writer.writeFileBlob(file, big.length);
    expect(id).toBe(git(["hash-object", "--no-filters", file]).toString().trim());
    expect(git(["cat-file", "-s", id!]).toString().trim()).toBe(String(big.length));
    expect(await writer.writeFileBlob(file, big.length + 1)).toBeNull(); // changed size: caller rescans
    expect(readFileSync(file).length).toBe(big.length);
  });
});
