import { promises as fs } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { runGit } from "../git/exec.js";
import { STORE_FILES } from "../store/layout.js";
import type { StoreContext } from "../store/context.js";
import { promisedObjectsArgs } from "../store/promisor.js";
import { NO_FSMONITOR } from "../git/exec.js";

/**
 * Whether dropping `candidates` (snapshot ids) would free any of the store's disk beyond their
 * own commit records: some tree or file only they reach (not the snapshots that stay, nor the
 * protected trees) that the store holds on its own. Objects your repository also holds cost the shadow store nothing (they are borrowed,
 * its copies are links); in the repo store, objects your refs or index reach stay with them. When
 * nothing would be freed, the size cap must not drop snapshots for it: what keeps the store over
 * its cap is content the kept snapshots need.
 */
export async function dropFreesAnything(
  engine: StoreContext,
  candidates: string[],
  /** The commits and trees of the snapshots that stay. */
  staying: string[],
  keepTrees: string[],
): Promise<boolean> {
  return (await freedBy(engine, candidates, staying, keepTrees)).objects.length > 0;
}

/**
 * The bytes the file contents (blobs) only `candidates` reach take in the store, as
 * `dropFreesAnything` finds them: what dropping them should give back, where their trees and
 * commits, a few hundred bytes each, may not show in the store's size at all.
 */
export async function contentBytesFreedBy(
  engine: StoreContext,
  candidates: string[],
  staying: string[],
  keepTrees: string[],
): Promise<number> {
  const { objects, where } = await freedBy(engine, candidates, staying, keepTrees);
  if (objects.length === 0) return 0;
  const sizes = await runGit(["cat-file", "--batch-check=%(objecttype) %(objectsize:disk)"], {
    ...where,
    input: `${objects.join("\n")}\n`,
  });
  let bytes = 0;
  for (const line of sizes.stdout.toString().split("\n")) {
    const [type, size] = line.split(" ");
    if (type === "blob") bytes += Number(size) || 0;
  }
  return bytes;
}

/** The objects but commits that only `candidates` reach and the store holds on its own, and where git reads them. */
async function freedBy(
  engine: StoreContext,
  candidates: string[],
  staying: string[],
  keepTrees: string[],
): Promise<{ objects: string[]; where: { cwd: string; env: NodeJS.ProcessEnv } }> {
  const storeGit = { cwd: engine.paths.dir, env: engine.readEnv };
  if (candidates.length === 0) return { objects: [], where: storeGit };
  const input = `${[...candidates, ...staying.map((id) => `^${id}`), ...keepTrees.map((t) => `^${t}`)].join("\n")}\n`;
  const promised = promisedObjectsArgs(engine).length > 0 ? ["--missing=allow-promisor"] : [];
  if (engine.refs.kind !== "shadow") {
    const where = { cwd: engine.root, env: { GIT_DIR: engine.location.commonDir } };
    const only = await runGit(
      [
        ...NO_FSMONITOR,
        "rev-list",
        "--objects",
        ...promised,
        "--no-object-names",
        "--stdin",
        "--not",
        "--exclude=refs/ghostcommit/*",
        "--all",
        "--indexed-objects",
      ],
      { ...where, input },
    );
    return { objects: content(only.stdout, candidates), where };
  }
  const only = await runGit(["rev-list", "--objects", ...promised, "--no-object-names", "--stdin"], {
    ...storeGit,
    input,
  });
  const objects = content(only.stdout, candidates);
  if (objects.length === 0 || !engine.location.commonDir) return { objects, where: storeGit };
  // Those your repository holds are borrowed: dropping them frees nothing here.
  const held = await runGit(["cat-file", "--batch-check=%(objectname)"], {
    cwd: engine.root,
    env: { GIT_DIR: engine.location.commonDir },
    input: `${objects.join("\n")}\n`,
  });
  const missing = held.stdout
    .toString()
    .split("\n")
    .filter((line) => line.endsWith(" missing"))
    .map((line) => line.slice(0, line.indexOf(" ")));
  return { objects: missing, where: storeGit };
}

/** The objects listed but the candidates' own commits (a few hundred bytes each, no content). */
function content(listed: Buffer, candidates: string[]): string[] {
  const own = new Set(candidates);
  return listed
    .toString()
    .split("\n")
    .filter((oid) => oid && !own.has(oid));
}

/**
 * After a prune, the ids the store keeps (what it linked from the user's repository, the hash
 * cache's blobs, which a snapshot uses without rewriting them) may name objects that are gone.
 */
export async function forgetPrunedIds(engine: StoreContext): Promise<void> {
  await fs.rm(path.join(engine.paths.dir, STORE_FILES.borrowed), { force: true });
  await fs.rm(path.join(engine.paths.dir, STORE_FILES.hashCache), { force: true });
}

/** A write that failed for want of room (a full disk, a quota). */
export function outOfRoom(error: unknown): boolean {
  return GhostcommitError.is(error, "io") && (error.data.errno === "ENOSPC" || error.data.errno === "EDQUOT");
}

/** What the store rebuilds as it goes (at the cost of a slower next snapshot), so it may go to make room. */
const REBUILT: readonly (keyof typeof STORE_FILES)[] = [
  "statusIndex",
  "statusIndexSource",
  "hashCache",
  "objectCache",
  "blobSizes",
  "cleanProof",
  "baseInfo",
  "ghostignoreDirs",
  "plainIgnoreFiles",
];

export async function dropRebuiltCaches(engine: StoreContext): Promise<void> {
  for (const name of REBUILT) await fs.rm(path.join(engine.paths.dir, STORE_FILES[name]), { force: true });
}
