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
  if (candidates.length === 0) return false;
  const input = `${[...candidates, ...staying.map((id) => `^${id}`), ...keepTrees.map((t) => `^${t}`)].join("\n")}\n`;
  const promised = promisedObjectsArgs(engine).length > 0 ? ["--missing=allow-promisor"] : [];
  if (engine.refs.kind !== "shadow") {
    const env = { GIT_DIR: engine.location.commonDir };
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
      { cwd: engine.root, env, input },
    );
    return content(only.stdout, candidates).length > 0;
  }
  const only = await runGit(["rev-list", "--objects", ...promised, "--no-object-names", "--stdin"], {
    cwd: engine.paths.dir,
    env: engine.readEnv,
    input,
  });
  const objects = content(only.stdout, candidates);
  if (objects.length === 0) return false;
  if (!engine.location.commonDir) return true;
  // Those your repository holds are borrowed: dropping them frees nothing here.
  const held = await runGit(["cat-file", "--batch-check=%(objectname)"], {
    cwd: engine.root,
    env: { GIT_DIR: engine.location.commonDir },
    input: `${objects.join("\n")}\n`,
  });
  return held.stdout.toString().includes(" missing");
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
