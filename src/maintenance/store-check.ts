import { readLastSafety } from "../store/last-safety.js";
import { accessSync, constants, promises as fs } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { runGit } from "../git/exec.js";
import { STORE_FILES } from "../store/layout.js";
import { promisedObjectsArgs } from "../store/promisor.js";
import type { DoctorReport } from "../types.js";
import { anyHeldByLive, deadSharedHolders } from "../util/lock.js";
import { deadPackTemps, isGitPackTemp } from "../store/pack-temps.js";
import { formatBytes } from "../util/format.js";
import { deadCaptureTemps } from "../git/loose-objects.js";

export type Problem = DoctorReport["problems"][number];

/** Per snapshot: the objects it needs that cannot be read (empty map when all are there). */
export async function snapshotsMissingObjects(
  engine: StoreContext,
  ids: string[],
): Promise<Map<string, string[]>> {
  const missing = new Map<string, string[]>();
  if (ids.length === 0) return missing;
  const promised = promisedObjectsArgs(engine);
  const walk = (input: string[], mode = "print") =>
    runGit([...promised, "rev-list", "--objects", "--no-walk", `--missing=${mode}`, "--stdin"], {
      cwd: engine.paths.dir,
      env: engine.readEnv,
      input: `${input.join("\n")}\n`,
      okCodes: [0, 128],
    });
  // In a partial clone, first walk allowing what it was promised (the walk fails on anything else).
  const firstMode = promised.length > 0 ? "allow-promisor" : "print";
  const all = await walk(ids, firstMode);
  if (all.code === 0 && !all.stdout.toString("latin1").includes("\n?")) {
    if (!all.stdout.toString("latin1").startsWith("?")) return missing;
  }
  // Something is missing: find out which snapshots need it, one walk per snapshot.
  for (const id of ids) {
    if (promised.length > 0 && (await walk([id], firstMode)).code === 0) continue;
    const one = await walk([id]);
    const lines = one.stdout.toString("latin1").split("\n");
    const gone = lines.filter((l) => l.startsWith("?")).map((l) => l.slice(1, 41));
    if (one.code !== 0 && gone.length === 0) gone.push(id);
    if (gone.length > 0) missing.set(id, gone);
  }
  return missing;
}

/**
 * The plain-directory index (the store's stat cache of a directory without git) must name only
 * objects the store has: a snapshot writes its tree from it. Returns why it is unusable, or null.
 */
export async function plainIndexProblem(engine: StoreContext): Promise<string | null> {
  const indexFile = path.join(engine.paths.dir, STORE_FILES.plainIndex);
  if (!(await fs.stat(indexFile).catch(() => null))) return null;
  const env = { ...engine.readEnv, GIT_INDEX_FILE: indexFile };
  const listed = await runGit(["ls-files", "-s", "-z"], { cwd: engine.paths.dir, env, okCodes: [0, 128] });
  if (listed.code !== 0) return "it cannot be read";
  const oids = new Set<string>();
  for (const record of listed.stdout.toString("latin1").split("\0")) {
    const match = /^\d+ ([0-9a-f]{40}) /.exec(record);
    if (match) oids.add(match[1]);
  }
  if (oids.size === 0) return null;
  const check = await runGit(["cat-file", "--buffer", "--batch-check=%(objectname)"], {
    cwd: engine.paths.dir,
    env: engine.readEnv,
    input: `${[...oids].join("\n")}\n`,
    okCodes: [0, 128],
  });
  const gone = check.stdout
    .toString("latin1")
    .split("\n")
    .filter((l) => l.endsWith(" missing"));
  return gone.length > 0 ? `it names ${gone.length} missing object(s)` : null;
}

/**
 * Git lock files (and `packed-refs.new`) a git that died left in the store's git dir, which fail
 * every later ref update (gc, drop). Only ghostcommit's git writes there, under the store's locks:
 * while no live process holds one, all are a dead git's; while one does, those over a minute old.
 */
export async function staleGitLocks(engine: StoreContext, ageMs = 60_000): Promise<string[]> {
  if (!anyHeldByLive(engine.paths.dir, path.join(engine.paths.dir, STORE_FILES.writersDir))) ageMs = -1;
  const found: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && depth < 6 && entry.name !== "objects") await visit(full, depth + 1);
      else if (entry.name.endsWith(".lock") || (depth === 0 && entry.name === "packed-refs.new")) {
        const stat = await fs.lstat(full).catch(() => null);
        if (stat && Date.now() - stat.mtimeMs > ageMs) found.push(full);
      }
    }
  };
  if (engine.refs.kind === "shadow") await visit(engine.paths.gitDir, 0);
  return found;
}

/**
 * Temp files git leaves in the store's objects when it dies or fails mid-write (a repack on a
 * full disk): `tmp_pack_*`, `tmp_idx_*`, `tmp_obj_*`. Old ones only: a running repack's are new.
 */
export async function staleGitTempFiles(engine: StoreContext, ageMs = 3_600_000): Promise<string[]> {
  if (engine.refs.kind !== "shadow") return []; // the repo store's objects are the user's
  const found: string[] = [];
  for (const dir of [engine.paths.objectsDir, path.join(engine.paths.objectsDir, "pack")]) {
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      // git's own temp packs are removed once no process can be writing them (deadPackTemps).
      if (!/^tmp_(pack|idx|rev|obj)_/.test(name) || isGitPackTemp(name)) continue;
      const stat = await fs.lstat(path.join(dir, name)).catch(() => null);
      if (stat?.isFile() && Date.now() - stat.mtimeMs > ageMs) found.push(path.join(dir, name));
    }
  }
  return found;
}

/**
 * The index, reverse index, bitmap or keep file of a pack whose `.pack` is gone (deleted by hand or
 * by a cleaning tool; `doctor --repair` then drops the snapshots it held): git ignores them, so
 * they only take room. Only old ones: git's index-pack writes a pack's `.keep` before the pack.
 */
export async function orphanedPackFiles(engine: StoreContext, ageMs = 600_000): Promise<string[]> {
  if (engine.refs.kind !== "shadow") return [];
  const dir = path.join(engine.paths.objectsDir, "pack");
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const found: string[] = [];
  for (const name of names) {
    const part = /^(pack-[0-9a-f]+)\.(idx|rev|bitmap|mtimes|keep|promisor)$/.exec(name);
    if (!part || names.includes(`${part[1]}.pack`)) continue;
    const stat = await fs.lstat(path.join(dir, name)).catch(() => null);
    if (stat?.isFile() && Date.now() - stat.mtimeMs > ageMs) found.push(path.join(dir, name));
  }
  return found;
}

/** git's temp pack files no live process writes, and those of killed captures, each with its size. */
export async function leftoverPackTemps(engine: StoreContext): Promise<Problem[]> {
  const gits = (await deadPackTemps(engine)).map((temp) => ({
    code: "leftover-temp-pack" as const,
    message: `${temp.file} (${formatBytes(temp.bytes)}) was left by a git that died (a fetch or gc cut off, or a write that failed); doctor --repair, the next fetch or the next gc removes it`,
    path: temp.file,
  }));
  const captures: Problem[] = [];
  for (const file of deadCaptureTemps(engine.refs.objectsDir)) {
    const bytes = (await fs.lstat(file).catch(() => null))?.size ?? 0;
    captures.push({
      code: "leftover-temp-pack",
      message: `${file} (${formatBytes(bytes)}) was left by ${/^tmp_idx_/.test(path.basename(file)) ? "a doctor --repair killed while it indexed a pack" : "a snapshot that was killed while writing it"}; the next snapshot or doctor --repair removes it`,
      path: file,
    });
  }
  return [...gits, ...captures];
}

/** The snapshot last-safety.json names when the store no longer lists it, or null. */
export async function lostLastSafety(
  engine: StoreContext,
  listed: readonly string[],
): Promise<string | null> {
  const id = await readLastSafety(engine);
  return id && !listed.includes(id) ? id : null;
}

/** `.ghostlock` files whose owner process is dead (taken over anyway by the next run). */
export async function deadLocks(engine: StoreContext, alive: (pid: number) => boolean): Promise<string[]> {
  const found: string[] = [];
  // The store's locks, and each session journal's (a hook killed while it appended to one).
  const dirs = [engine.paths.dir, engine.paths.sessionsDir];
  const names = async (dir: string) =>
    (await fs.readdir(dir).catch(() => [] as string[])).map((n) => path.join(dir, n));
  for (const file of (await Promise.all(dirs.map(names))).flat()) {
    if (!/\.ghostlock(\.break)?$/.test(file)) continue;
    let pid = Number.NaN;
    try {
      pid = Number((JSON.parse(await fs.readFile(file, "utf8")) as { pid?: unknown }).pid);
    } catch {
      // unreadable: dead if old
    }
    const stat = await fs.stat(file).catch(() => null);
    if (Number.isInteger(pid) ? !alive(pid) : stat && Date.now() - stat.mtimeMs > 10_000) found.push(file);
  }
  // The shared side: one file per snapshot writing, left by one killed.
  found.push(...deadSharedHolders(path.join(engine.paths.dir, STORE_FILES.writersDir)));
  return found;
}

/**
 * The first directory every snapshot writes in that this user cannot write to (a store made
 * read-only, owned by another user, or on a read-only mount), with the system's code: each
 * snapshot fails there. One access() each; one not made yet is made below one checked before it.
 */
export function unwritableStoreDir(engine: StoreContext): { dir: string; errno: string } | null {
  const { paths, refs } = engine;
  const dirs = [
    paths.dir,
    paths.tmpDir,
    path.join(paths.dir, STORE_FILES.writersDir),
    paths.gitDir,
    refs.objectsDir,
    path.join(refs.objectsDir, "pack"),
    path.join(refs.refsGitDir, "refs"),
    path.join(refs.refsGitDir, refs.refPrefix),
  ];
  for (const dir of dirs) {
    try {
      accessSync(dir, constants.W_OK | constants.X_OK);
    } catch (error) {
      const errno = (error as NodeJS.ErrnoException).code ?? "EACCES";
      if (errno !== "ENOENT") return { dir, errno };
    }
  }
  return null;
}

/** The safety snapshot, hint and temp-file token a restore's state file names; nulls when it is torn or unreadable. */
export async function namedIn(
  file: string,
): Promise<{ safety: string | null; hint?: string; redo?: true; token?: string }> {
  try {
    const value = JSON.parse(await fs.readFile(file, "utf8")) as {
      safety?: unknown;
      hint?: unknown;
      redo?: unknown;
      token?: unknown;
    } | null;
    return {
      safety: typeof value?.safety === "string" ? value.safety : null,
      ...(typeof value?.hint === "string" ? { hint: value.hint } : {}),
      ...(value?.redo === true ? { redo: true as const } : {}),
      ...(typeof value?.token === "string" && /^[0-9a-f]+$/.test(value.token) ? { token: value.token } : {}),
    };
  } catch {
    return { safety: null };
  }
}

export function interruptedProblem(
  named: { safety: string | null; hint?: string; redo?: true; token?: string },
  file: string,
  startedAt = "",
): Problem {
  // A rewind says how to finish or undo it through its session (restoring the safety snapshot
  // would leave the session out of step); it stays half done until one of them runs, where a
  // plain restore's record is settled by any restore run to its end, or `doctor --repair`.
  const started = startedAt ? ` started ${startedAt}` : "";
  const message = named.hint
    ? `a ${named.redo ? "redo" : "rewind"}${started} was interrupted; ${named.hint} (until ${named.redo ? "it runs" : "one of them runs"}, some files are back and others not)`
    : `a restore${started} was interrupted; \`ghostcommit restore ${named.safety ?? "<safety id>"}\` brings back the state before it (a restore that runs to its end, or \`doctor --repair\`, settles this)`;
  return {
    code: "interrupted-restore",
    message: `${message}${tempFilesLeft(named.token)}`,
    path: file,
  };
}

/** Where the killed run's temp files may still stand in the workspace (git shows them as untracked) until a capture removes them. */
function tempFilesLeft(token: string | undefined): string {
  if (!token) return "";
  return `; the temp files it was writing, named \`.<name>.gc-${token}-<n>~\`, go at the next snapshot or restore, or with \`doctor --repair\``;
}
