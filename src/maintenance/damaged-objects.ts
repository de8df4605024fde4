import { createReadStream, promises as fs, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import { gitReason } from "../git/failure.js";
import { GhostcommitError } from "../errors.js";
import type { StoreContext } from "../store/context.js";
import { STORE_FILES } from "../store/layout.js";
import type { DoctorProblem, DoctorRepair } from "../types.js";
import { nodeCrypto } from "../util/crypto.js";
import { withLock } from "../util/lock.js";
import { namesIn } from "../util/small-files.js";
import { zlib } from "../util/zlib.js";
import { streamPromises } from "../util/stream-promises.js";
import {
  packsUnlikeTheirIndex,
  repairUnindexedPacks,
  unindexedPackProblems,
  unindexedPacks,
} from "./unindexed-packs.js";

/** Loose objects up to this size are read and inflated in one piece; larger ones are streamed. */
const WHOLE_BYTES = 1024 * 1024;

export interface DamagedObject {
  oid: string;
  file: string;
  /** What is wrong with it, in a few words. */
  fault: string;
}

/**
 * The shadow store's loose objects whose file is not the object its name says: empty (a power cut
 * before the disk had it), torn, or with bytes changed. git fails on such an object only when it
 * reads all of it, so `list` and most restores go on working while every gc's repack fails
 * ("inflate: data stream error") and the store only grows.
 *
 * Loose objects only, each read in full: gc packs every one, so they are what was written since the
 * last gc (few, whatever the store's size), and they are what a failing repack reads first. The
 * packs are left to git: a repack checks each packed object's checksum as it copies it, while a
 * full `git fsck` reads every object of the store, minutes on a large one, too slow for a check
 * that is run freely (and by hand after a failed hook). The repo store's objects are the user's.
 */
export async function damagedLooseObjects(engine: StoreContext): Promise<DamagedObject[]> {
  if (engine.refs.kind !== "shadow") return [];
  const damaged: DamagedObject[] = [];
  const objects = engine.paths.objectsDir;
  for (const fanOut of namesIn(objects)) {
    if (!/^[0-9a-f]{2}$/.test(fanOut)) continue;
    for (const rest of namesIn(path.join(objects, fanOut))) {
      if (!/^[0-9a-f]{38}$/.test(rest)) continue; // temp files are the leftovers' check
      const file = path.join(objects, fanOut, rest);
      const fault = await looseObjectFault(file, fanOut + rest);
      if (fault) damaged.push({ oid: fanOut + rest, file, fault });
    }
  }
  return damaged;
}

/** Why `file` is not the loose object `oid`, or null when it is (or is gone: pruned meanwhile). */
export async function looseObjectFault(file: string, oid: string): Promise<string | null> {
  let size: number;
  try {
    // Synchronous for the small ones, as most are: a promise call's thread-pool round trips cost
    // more than the reads themselves, over thousands of objects.
    size = statSync(file).size;
    if (size === 0) return "the file is empty";
    const content = size <= WHOLE_BYTES ? inflatedWhole(readFileSync(file)) : await inflatedStream(file);
    if (!content) return "its data cannot be inflated";
    return checkContent(content, oid);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? null : `it cannot be read (${code ?? String(error)})`;
  }
}

interface Inflated {
  /** The first bytes: the header `<type> <size>\0`. */
  head: Buffer;
  length: number;
  digest: string;
}

function inflatedWhole(data: Buffer): Inflated | null {
  let body: Buffer;
  try {
    body = zlib().inflateSync(data);
  } catch {
    return null;
  }
  const digest = nodeCrypto().createHash("sha1").update(body).digest("hex");
  return { head: body.subarray(0, 64), length: body.length, digest };
}

async function inflatedStream(file: string): Promise<Inflated | null> {
  const hash = nodeCrypto().createHash("sha1");
  let head = Buffer.alloc(0);
  let length = 0;
  try {
    await streamPromises().pipeline(
      createReadStream(file),
      zlib().createInflate(),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          hash.update(chunk);
          length += chunk.length;
          if (head.length < 64) head = Buffer.concat([head, chunk.subarray(0, 64)]);
        }
      },
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code?.startsWith("Z_")) return null;
    throw error;
  }
  return { head, length, digest: hash.digest("hex") };
}

function checkContent(content: Inflated, oid: string): string | null {
  const header = /^(blob|tree|commit|tag) (\d+)\0/.exec(content.head.toString("latin1"));
  if (!header) return "it has no object header";
  if (content.length - header[0].length !== Number(header[2])) return "it is cut short";
  return content.digest === oid ? null : "its content does not match its id";
}

/** Damage to the store's objects git does not report until a gc fails: unindexed packs, damaged loose objects. */
export async function objectDamageProblems(engine: StoreContext): Promise<DoctorProblem[]> {
  const damaged = (await damagedLooseObjects(engine)).map((object) => ({
    code: "damaged-object" as const,
    message: `object ${object.oid} in the store is damaged (${object.fault}): every gc fails on it, and a snapshot that needs it cannot be restored; \`doctor --repair\` removes it (where another copy holds the object, a pack or your repository's objects, nothing is lost; otherwise the snapshots that need it are dropped)`,
    path: object.file,
  }));
  return [...(await unindexedPackProblems(engine)), ...damaged];
}

/**
 * Indexes unindexed packs again, then removes the damaged loose objects: git then reads another
 * copy where there is one (a pack of the store, the user's objects it borrows). Runs before the
 * snapshots are checked: what this brings back keeps them, and the snapshots that need an object
 * nothing holds any more are dropped by the missing-objects repair after it. Under the gc lock
 * (taken only when there is something to do): no repack or prune runs meanwhile.
 */
export async function repairObjectDamage(engine: StoreContext): Promise<DoctorRepair[]> {
  const found = await damagedLooseObjects(engine);
  const packs = [...(await unindexedPacks(engine)), ...(await packsUnlikeTheirIndex(engine))];
  if (found.length === 0 && packs.length === 0) return [];
  return withLock(path.join(engine.paths.dir, STORE_FILES.gcLock), async () => {
    const done = await repairUnindexedPacks(engine);
    for (const object of found) {
      // Checked again under the lock: a gc that ran meanwhile may have removed it.
      const fault = await looseObjectFault(object.file, object.oid);
      if (!fault) continue;
      await fs.rm(object.file, { force: true });
      const whole = await readsWhole(engine, object.oid);
      done.push({
        code: "removed-damaged-object",
        message: `removed the damaged object ${object.oid} (${fault}): ${
          whole === "whole"
            ? "another copy holds it whole, nothing is lost"
            : whole === "missing"
              ? "no other copy holds it, so the snapshots that need it are dropped"
              : "the copy left in your repository's objects is damaged too (git fsck there names it)"
        }`,
        path: object.file,
      });
    }
    return done;
  });
}

/** Whether git reads `oid` in full now, finds it missing, or finds it and fails to read it. */
async function readsWhole(engine: StoreContext, oid: string): Promise<"whole" | "missing" | "damaged"> {
  const git = (args: string[]) =>
    runGit(args, { cwd: engine.paths.dir, env: engine.readEnv, okCodes: [0, 1, 128], onStdout: () => {} });
  if ((await git(["cat-file", "-e", oid])).code !== 0) return "missing";
  return (await git(["cat-file", "-p", oid])).code === 0 ? "whole" : "damaged";
}

/** git's words for objects it cannot read while it packs them: a pack, an object or a ref's target. */
const OBJECT_DAMAGE =
  /bad object|does not match index|inflate|corrupt|unable to read|missing (blob|tree|commit)|packed object .* is corrupt/i;

/**
 * A repack that failed on damaged objects, said as damage with what mends it: `doctor` names the
 * pack, object or ref, and `doctor --repair` mends it (until then every gc fails the same way).
 */
export function damagedObjectsFailure(error: unknown): GhostcommitError | null {
  if (!GhostcommitError.is(error, "git-failed") || !OBJECT_DAMAGE.test(error.data.stderr ?? "")) return null;
  return new GhostcommitError(
    "store-damaged",
    `gc cannot pack the store: some of its objects are damaged (${gitReason(error.data.stderr ?? "")}); \`ghostcommit doctor\` names what, and \`doctor --repair\` mends it (the library's \`doctor({ repair: true })\`)`,
    {},
    error,
  );
}
