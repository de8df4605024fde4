import { randomHex } from "../util/crypto.js";
import {
  accessSync,
  constants as fsConstants,
  existsSync,
  mkdirSync,
  promises as fs,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { dataHome, dataHomeChosenBy } from "../util/data-dirs.js";
import { fsError } from "../errors.js";
import type { WorkspaceLocation } from "../git/repository.js";
import { writeFileAtomic } from "../util/state-files.js";
import { makeDirs } from "../util/make-dirs.js";
import { GhostcommitError } from "../errors.js";
import { STORE_ATTRIBUTES, STORE_CONFIG } from "./store-config.js";

// The store's files are written and read through these (kept with the other file helpers).
export { isPlainObject, readJson, writeFileAtomic } from "../util/state-files.js";

/**
 * The on-disk layout of one workspace's store under the data directory:
 *
 *   workspaces/<key>/git/       a private git directory (objects, refs, our config and attributes)
 *   workspaces/<key>/tmp/       per-process scratch (temporary git dirs, restore journals)
 *   workspaces/<key>/sessions/  session journals
 *   workspaces/<key>/*.json     small state files, each replaced atomically
 */
export interface StorePaths {
  dir: string;
  gitDir: string;
  objectsDir: string;
  tmpDir: string;
  sessionsDir: string;
  logFile: string;
}

/**
 * Names of the files in a store's directory (`workspaces/<key>/`), each owned by one module.
 * Every state file is a cache or a record that the next run can rebuild or do without.
 */
export const STORE_FILES = {
  /** Blob ids of unchanged files by stat data (capture). */
  hashCache: "hash-cache.json",
  /** Facts about HEAD's tree reused across snapshots (capture). */
  baseInfo: "base-info.json",
  /** The directories below the workspace holding a `.ghostignore`, by the index that listed them (capture). */
  ghostignoreDirs: "ghostignore-dirs.json",
  /** Which of the user's object files are hard-linked into the store (borrow). */
  borrowed: "borrowed.json",
  /** The safety snapshot of the latest restore, which gc never expires (restore). */
  lastSafety: "last-safety.json",
  /** Counts of the plain-directory capture, for its budget (capture). */
  plainState: "plain-state.json",
  /** The stat-cached index of a plain directory (capture); gc counts what it names as reachable. */
  plainIndex: "plain-index",
  /** Where that index's untracked cache records a .gitignore, by the index's identity (capture). */
  plainIgnoreFiles: "plain-ignore-files.json",
  /** When retention last ran (maintenance). */
  retention: "retention.json",
  /** The user's git config values that decide conversions (capture). */
  gitConfig: "git-config.json",
  /** Tracked files a converting repository's index cannot prove clean, by index checksum (capture). */
  cleanProof: "clean-proof.json",
  /** Trees and commits the last capture read, so the next needs no git process for them (capture). */
  objectCache: "object-cache.bin",
  /** Blob sizes by id, for that proof (capture). */
  blobSizes: "blob-sizes.bin",
  /** A private copy of the user's index carrying git's untracked cache (capture). */
  statusIndex: "status-index",
  /** Which user index that copy was made from (capture). */
  statusIndexSource: "status-index.json",
  /** Held while a detached process builds that copy's untracked cache (capture). */
  statusIndexBuild: "status-index.building",
  /** The Watchman watch status uses, and whether ghostcommit started it (capture). */
  watchman: "watchman.json",
  /** Created by the fsmonitor hook when Watchman no longer watches the work tree (capture). */
  watchmanLost: "watchman-lost",
  /** git's fsmonitor hook, which asks Watchman (capture). */
  fsmonitorHook: "fsmonitor-hook.pl",
  /** Held by gc; object writers wait while it is held (maintenance). */
  gcLock: "gc.ghostlock",
  /** One file per process writing objects, the shared side of the gc lock. */
  writersDir: "writers",
  /** One restore at a time per workspace (restore). */
  restoreLock: "restore.ghostlock",
  /** One plain-directory capture at a time (capture). */
  plainIndexLock: "plain-index.ghostlock",
  /** One push or fetch at a time per store (session). */
  syncLock: "sync.ghostlock",
  /** Where each fetched session came from (session). */
  remoteSessions: "remote-sessions.json",
  /** The outcome of the latest background push, for doctor (session). */
  pushStatus: "push-status.json",
  /** Failures of background pushes (session). */
  pushLog: "push.log",
  /** Prefix of the go-ahead a turn's end writes for the push process waiting for it (session). */
  pushGo: "push-go",
  /** The same for the daily retention's process (maintenance). */
  gcGo: "gc-go",
  /** Made once a Codex hook event here named its file-edit tool: that build hooks its edits (integrations). */
  codexEditsHooked: "codex-edits-hooked",
} as const;

/** The data directory of the workspace with this key (its store, sessions and caches). */
export function workspaceDir(key: string): string {
  return path.join(dataHome(), "workspaces", key);
}

export function storePaths(location: WorkspaceLocation): StorePaths {
  return storePathsAt(workspaceDir(location.key));
}

/** The paths of the store in workspace data directory `dir`. */
export function storePathsAt(dir: string): StorePaths {
  const gitDir = path.join(dir, "git");
  return {
    dir,
    gitDir,
    objectsDir: path.join(gitDir, "objects"),
    tmpDir: path.join(dir, "tmp"),
    sessionsDir: path.join(dir, "sessions"),
    logFile: path.join(dir, "ghostcommit.log"),
  };
}

/**
 * Creates the store if missing. Safe when several processes race: each builds aside and renames in.
 * `fill` adds to the git directory being built (at `staging`) before it is put in place.
 */
export async function ensureStore(
  paths: StorePaths,
  location: WorkspaceLocation,
  fill?: (staging: string) => Promise<void>,
): Promise<void> {
  if (existsSync(path.join(paths.gitDir, "HEAD"))) {
    // A HEAD git cannot read fails every git command with "not a git repository": said as damage.
    if (!validHead(path.join(paths.gitDir, "HEAD"))) throw headlessStore(paths.gitDir);
    // A process killed between creating the git dir and its scratch dir left no tmp/.
    await ensureTmpDir(paths);
    return;
  }
  // Private: the store holds file contents (a touched .env included).
  try {
    makeDirs(paths.dir);
  } catch (error) {
    throw fsError(error, "create this workspace's store in", path.dirname(path.dirname(paths.dir)));
  }
  const staging = path.join(paths.dir, `git.init-${process.pid}-${randomHex(4)}`);
  try {
    // What `git init --bare --template=` makes, without a git process: a git directory is HEAD,
    // objects/ and refs/ (the config below replaces the one git would write). Synchronous: a
    // dozen tiny calls, each of which would cost more as a thread-pool round trip.
    const priv = { mode: 0o600 };
    mkdirSync(staging, { mode: 0o700 });
    for (const dir of [
      "objects",
      "objects/info",
      "objects/pack",
      "refs",
      "refs/heads",
      "refs/tags",
      "info",
    ]) {
      mkdirSync(path.join(staging, dir), { mode: 0o700 });
    }
    writeFileSync(path.join(staging, "HEAD"), "ref: refs/heads/main\n", priv);
    writeFileSync(path.join(staging, "config"), STORE_CONFIG, priv);
    writeFileSync(path.join(staging, "info", "attributes"), STORE_ATTRIBUTES, priv);
    writeFileSync(path.join(staging, "info", "exclude"), "", priv);
    if (location.commonDir) {
      writeFileSync(
        path.join(staging, "objects", "info", "alternates"),
        `${path.join(location.commonDir, "objects")}\n`,
        priv,
      );
    }
    // Says which workspace the store is for, to people and tools browsing the data dir; nothing
    // depends on it, so a new store's first snapshot does not wait for a disk flush of it.
    await writeFileAtomic(
      path.join(paths.dir, "workspace.json"),
      `${JSON.stringify({ root: location.root, kind: location.kind, gitDir: location.gitDir ?? null }, null, 2)}\n`,
      0o600,
      false,
    );
    await fill?.(staging);
    renameSync(staging, paths.gitDir);
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    // Another process won the race: its store is as good as ours.
    try {
      await fs.access(path.join(paths.gitDir, "HEAD"));
    } catch {
      // Not a race: a git directory without its HEAD (removed by hand, a damaged disk).
      if (existsSync(paths.gitDir)) throw headlessStore(paths.gitDir);
      throw error;
    }
    await ensureTmpDir(paths);
    return;
  }
  mkdirSync(paths.tmpDir, { recursive: true, mode: 0o700 });
  mkdirSync(paths.sessionsDir, { recursive: true, mode: 0o700 });
}

/**
 * A store git directory git takes for no repository: its HEAD missing or garbled (no symbolic ref,
 * no object id), or its refs/ or objects/ gone. Every command says so (doctor --repair mends it).
 */
export function headlessStore(gitDir: string): GhostcommitError {
  const head = path.join(gitDir, "HEAD");
  const fault = existsSync(head) ? "its HEAD is garbled" : "its HEAD is missing";
  const gone = ["refs", "objects"]
    .filter((dir) => !isDirectory(path.join(gitDir, dir)))
    .map((dir) => `${dir}/`);
  const faults = validHead(head)
    ? gone.map((dir) => `its ${dir} is missing`)
    : [fault, ...gone.map((dir) => `${dir} is missing`)];
  return new GhostcommitError(
    "store-damaged",
    `the store's git directory ${gitDir} is damaged (${faults.join(", ") || "git cannot read it"}); \`ghostcommit doctor --repair\` (the library's \`doctor({ repair: true })\`) mends it, keeping the snapshots`,
    { file: head },
  );
}

/** Whether git takes `file` for a HEAD: a symbolic ref or an object id (an empty or garbled one makes no repository). */
export function validHead(file: string): boolean {
  try {
    return /^(ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(readFileSync(file, "latin1"));
  } catch {
    return false;
  }
}

function isDirectory(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** Whether a store git directory that exists is one git reads as a repository (see `headlessStore`). */
export function storeFrameWhole(gitDir: string): boolean {
  return (
    validHead(path.join(gitDir, "HEAD")) &&
    isDirectory(path.join(gitDir, "refs")) &&
    isDirectory(path.join(gitDir, "objects"))
  );
}

/** Ensures the store's scratch directory exists (a killed store creation may have skipped it). */
export async function ensureTmpDir(paths: StorePaths): Promise<void> {
  mkdirSync(paths.tmpDir, { recursive: true, mode: 0o700 });
}

/**
 * Why no store can be made at `storeDir` (the nearest existing directory above it is a file, or
 * cannot be written to), or null, as when the store exists already. Synchronous: a prompt's hook
 * asks it before answering, so the person hears of it before a first snapshot fails unseen.
 */
export function storeCannotBeMade(storeDir: string): string | null {
  if (existsSync(path.join(storeDir, "git", "HEAD"))) return null;
  for (let dir = storeDir; ; dir = path.dirname(dir)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(dir).isDirectory();
    } catch {
      if (path.dirname(dir) === dir) return null;
      continue; // missing (or below a file): the directory above decides
    }
    let why: string | null = isDirectory ? null : `${dir} is a file, not a directory`;
    try {
      if (isDirectory) accessSync(dir, fsConstants.W_OK | fsConstants.X_OK);
    } catch (error) {
      why = `${dir} cannot be written to (${(error as NodeJS.ErrnoException).code})`;
    }
    return why && `the data directory cannot hold a store: ${why} (${dataHomeChosenBy()})`;
  }
}
