import { closeSync, fstatSync, openSync, promises as fs, readSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import { captureTempName } from "../git/loose-objects.js";
import type { StoreContext } from "../store/context.js";
import type { DoctorProblem, DoctorRepair } from "../types.js";
import { formatBytes } from "../util/format.js";

/**
 * The shadow store's packs with no `.idx` beside them (deleted by hand or by a cleaning tool, or a
 * crash between a pack's rename and its index's): git reads a pack only through its index, so
 * every object in it is missing to git, and no repack ever frees it. Only old ones: a fetch, a
 * repack or a capture renames its pack into place just before its index.
 */
export async function unindexedPacks(engine: StoreContext, ageMs = 600_000): Promise<string[]> {
  if (engine.refs.kind !== "shadow") return []; // the repo store's packs are the user's
  const dir = path.join(engine.paths.objectsDir, "pack");
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const found: string[] = [];
  for (const name of names) {
    const base = /^(pack-[0-9a-f]+)\.pack$/.exec(name)?.[1];
    if (!base || names.includes(`${base}.idx`)) continue;
    const stat = await fs.lstat(path.join(dir, name)).catch(() => null);
    if (stat?.isFile() && Date.now() - stat.mtimeMs > ageMs) found.push(path.join(dir, name));
  }
  return found;
}

/** A pack's and an index's trailing checksums are SHA-1 here: the store is a SHA-1 repository. */
const CHECKSUM_BYTES = 20;

/**
 * The shadow store's packs that are not the pack their `.idx` was made from: cut short (a crash
 * or a full disk while it was copied, a truncation by hand) or overwritten at the end. git trusts
 * the index: every object it lists counts as present, so a snapshot reuses it without writing it
 * again and is taken "successfully" without it, while every gc's repack fails ("packfile … does
 * not match index"). Told cheaply, as every doctor runs: the index records its pack's checksum,
 * which a whole pack ends with. Damage in the middle of a pack is a repack's to find.
 */
export async function packsUnlikeTheirIndex(engine: StoreContext): Promise<string[]> {
  if (engine.refs.kind !== "shadow") return [];
  const dir = path.join(engine.paths.objectsDir, "pack");
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const found: string[] = [];
  for (const name of names) {
    const base = /^(pack-[0-9a-f]+)\.pack$/.exec(name)?.[1];
    if (!base || !names.includes(`${base}.idx`)) continue;
    const packFile = path.join(dir, name);
    const recorded = lastBytes(path.join(dir, `${base}.idx`), CHECKSUM_BYTES);
    const actual = lastBytes(packFile, 0);
    // Gone meanwhile (a gc replaced it): nothing to say.
    if (recorded === "gone" || actual === "gone") continue;
    if (recorded === null || actual === null || !recorded.equals(actual)) found.push(packFile);
  }
  return found;
}

/**
 * The checksum a file ends with, `skip` bytes before its end (an index ends with its pack's
 * checksum, then its own); null when the file is too short to hold it.
 */
function lastBytes(file: string, skip: number): Buffer | null | "gone" {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    // A pack is at least its 12-byte header and its checksum.
    if (size < 12 + CHECKSUM_BYTES + skip) return null;
    const bytes = Buffer.alloc(CHECKSUM_BYTES);
    return readSync(fd, bytes, 0, CHECKSUM_BYTES, size - skip - CHECKSUM_BYTES) === CHECKSUM_BYTES
      ? bytes
      : null;
  } finally {
    closeSync(fd);
  }
}

export async function unindexedPackProblems(engine: StoreContext): Promise<DoctorProblem[]> {
  const problems: DoctorProblem[] = [];
  for (const file of await unindexedPacks(engine)) {
    const bytes = (await fs.lstat(file).catch(() => null))?.size ?? 0;
    problems.push({
      code: "unindexed-pack",
      message: `${file} (${formatBytes(bytes)}) has no index: git sees none of the objects in it, so the snapshots that need them look damaged, and gc never frees it; \`doctor --repair\` indexes it again before it checks the snapshots (should git fail to, as for a pack cut short, it keeps the objects git can read from it and removes the pack)`,
      path: file,
    });
  }
  for (const file of await packsUnlikeTheirIndex(engine)) {
    const bytes = (await fs.lstat(file).catch(() => null))?.size ?? 0;
    problems.push({
      code: "damaged-pack",
      message: `${file} (${formatBytes(bytes)}) is not the pack its index was made from (cut short or overwritten): git counts every object the index lists as present, so gc fails on it and a new snapshot may reuse an object that is not there; \`doctor --repair\` keeps the objects git can read from it, removes it, and drops the snapshots that need the rest`,
      path: file,
    });
  }
  return problems;
}

/**
 * Indexes each unindexed pack again (`git index-pack`), which brings back all its objects. The index
 * is written to a capture temp name and renamed into place, so a kill leaves no half-written index
 * git would read (the temp goes as a dead capture's does). Where git cannot index it (cut short,
 * damaged), what git can read of it is unpacked as loose objects and the pack is removed: it
 * would otherwise stay forever, and the snapshots that needed the rest are dropped after this.
 * The caller holds the gc lock: no repack or prune runs meanwhile.
 */
export async function repairUnindexedPacks(engine: StoreContext): Promise<DoctorRepair[]> {
  const done: DoctorRepair[] = [];
  const git = (args: string[], input?: () => Buffer | null) =>
    runGit(args, { cwd: engine.paths.dir, env: engine.readEnv, input, okCodes: [0, 1, 128] });
  // A pack unlike its index is one whose index no longer holds: without it, it is an unindexed
  // pack, indexed again from what it holds or, cut short, unpacked for what git can read.
  const unlike = await packsUnlikeTheirIndex(engine);
  for (const file of unlike) {
    for (const ext of [".idx", ".rev", ".bitmap"]) await fs.rm(file.replace(/\.pack$/, ext), { force: true });
  }
  for (const file of new Set([...unlike, ...(await unindexedPacks(engine))])) {
    const temp = path.join(path.dirname(file), captureTempName("idx"));
    const indexed = await git(["index-pack", "--no-rev-index", "-o", temp, file]);
    if (indexed.code === 0) {
      await fs.rename(temp, file.replace(/\.pack$/, ".idx"));
      done.push({
        code: "reindexed-pack",
        message: `indexed ${file} again: its objects are back`,
        path: file,
      });
      continue;
    }
    await fs.rm(temp, { force: true });
    const before = await looseCount(engine);
    const fd = openSync(file, "r");
    try {
      await git(["unpack-objects", "-r", "-q"], chunksOf(fd));
    } finally {
      closeSync(fd);
    }
    const kept = (await looseCount(engine)) - before;
    for (const ext of [".pack", ".keep", ".rev", ".bitmap", ".mtimes", ".promisor"])
      await fs.rm(file.replace(/\.pack$/, ext), { force: true });
    const reason =
      indexed.stderr
        .trim()
        .split("\n")
        .pop()
        ?.replace(/^fatal: /, "") ?? "";
    done.push({
      code: "removed-damaged-pack",
      message: `removed ${file}, which git cannot index (${reason}), after keeping the ${kept} object(s) git could read from it; the snapshots that need the rest are dropped`,
      path: file,
    });
  }
  return done;
}

/** The store's loose objects, as git counts them. */
async function looseCount(engine: StoreContext): Promise<number> {
  const counted = await runGit(["count-objects", "-v"], { cwd: engine.paths.dir, env: engine.readEnv });
  return Number(/^count: (\d+)$/m.exec(counted.stdout.toString())?.[1] ?? 0);
}

/** An open file as git's stdin, a MiB at a time (a pack may be as large as the store). */
function chunksOf(fd: number): () => Buffer | null {
  const buffer = Buffer.alloc(1024 * 1024);
  return () => {
    const read = readSync(fd, buffer, 0, buffer.length, null);
    return read > 0 ? buffer.subarray(0, read) : null;
  };
}
