import { randomHex } from "../util/crypto.js";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  promises as fs,
  renameSync,
  statSync,
  utimesSync,
} from "node:fs";
import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { type StatusEntry, unreadableDirs } from "../git/status.js";
import { indexChecksum, usesSplitIndex } from "../git/index-file.js";
import { type RelPath, relBytes, relFromBytes } from "../paths.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { gitRunning, whenGitRuns } from "../util/detached.js";
import { zlib } from "../util/zlib.js";
import { removeThrowawayGitDir, throwawayGitDir } from "./status-gitdir.js";
import { trace } from "../util/trace.js";
import type { CaptureContext } from "./context.js";
import { fsmonitorOptions } from "./fsmonitor.js";
import { buildInBackground, buildInProgress, type DeferredBuild } from "./status-cache.js";
import { reconcileNestedRepos } from "./nested-check.js";
import { parseSettingAside } from "./policy.js";
import type { UserGitConfig } from "./conversion.js";

export interface StatusResult {
  /** `git status --porcelain=2 -z --untracked-files=all`, parsed (but see `dependencyDirFiles`). */
  entries: StatusEntry[];
  /**
   * Untracked paths inside dependency directories (below the workspace), set aside from
   * `entries` and counted per outermost such directory (repository-relative): they are
   * excluded whatever they are, and a node_modules may list thousands.
   */
  dependencyDirFiles: Map<RelPath, number>;
  /** The index status compared against (a private copy of the user's). */
  indexFile: string;
  /** The private copy is to be made by a detached process (see status-cache.ts). */
  copyDeferred: DeferredBuild | null;
  /** Directories status could not read (repository-relative; see `unreadableDirs`). */
  unreadableDirs: RelPath[];
}

/**
 * Runs status from a throw-away git directory that shares the store's config and attributes (no
 * conversions, no hooks) and whose HEAD is the user's, against a private copy of the user's index
 * carrying git's untracked cache (and, where Watchman serves, git's fsmonitor data): unchanged
 * directories are not read again, so it costs less than a plain status of every untracked file.
 * The user's `core.excludesFile` and `core.ignoreCase` are passed on (the store's config would
 * hide them), so status ignores exactly what the user's git ignores.
 */
export async function runStatus(
  ctx: Pick<CaptureContext, "location" | "paths" | "settings" | "prepareStatusBuild">,
  head: string | null,
  worktreeRoot: string,
  prefix: RelPath,
  userConfig: Pick<UserGitConfig, "excludesFile" | "ignoreCase">,
  options: { spawned?: () => void; buildCopy?: boolean } = {},
): Promise<StatusResult> {
  const dependencyDirs = new Set(ctx.settings.dependencyDirs);
  const userIndex = path.join(ctx.location.gitDir!, "index");
  const found = await privateIndex(
    ctx.paths.dir,
    ctx.location.gitDir!,
    options.buildCopy ?? false,
    userConfig.ignoreCase,
  );
  const deferred = found === "deferred";
  let copyDeferred: DeferredBuild | null = null;
  if (deferred) trace("capture: status reads the user's index; a detached process makes the private copy");
  const privateCopy = deferred ? null : found;
  const copy = privateCopy?.file ?? null;
  const indexFile = copy ?? userIndex;
  const tempGitDir = await throwawayGitDir(ctx.paths, head ?? "ref: refs/heads/ghostcommit-unborn");
  try {
    const config = [
      ...(userConfig.excludesFile === null ? [] : ["-c", `core.excludesFile=${userConfig.excludesFile}`]),
      ...(userConfig.ignoreCase ? ["-c", "core.ignoreCase=true"] : []),
    ];
    // Watchman's answers persist in the private index only; the user's is never written.
    // Not in a detached build: a watch it began would be announced to no one.
    const watch =
      copy && !options.buildCopy
        ? await fsmonitorOptions(ctx.paths, ctx.settings, worktreeRoot, userIndex, [copy, tempGitDir])
        : null;
    const fsmonitor = watch?.options ?? [];
    const persist = privateCopy?.due(fsmonitor.length > 0, watch?.watchStarted ?? false) ?? false;
    const env = {
      GIT_DIR: tempGitDir,
      GIT_WORK_TREE: worktreeRoot,
      GIT_INDEX_FILE: indexFile,
      // Git may write the private index (that is how its caches persist), never the user's.
      GIT_OPTIONAL_LOCKS: persist ? "1" : "0",
    };
    const args = [
      ...config,
      ...(copy ? fsmonitor : ["-c", "core.fsmonitor=false"]),
      // Building an untracked cache pays only where git can keep it (the private copy): on the
      // user's index, which is never written, it cost a first snapshot's status ~6% for nothing.
      // `keep` still uses one the user's git made.
      "-c",
      copy ? "core.untrackedCache=true" : "core.untrackedCache=keep",
      // Marks where the entries end, so what depends on them only is not redone for a new cache.
      "-c",
      "index.recordEndOfIndexEntries=true",
      // A skip-worktree file that is on disk (written outside a sparse checkout's cone, or one
      // marked by hand) is compared as any other: git then clears the bit in memory, as the
      // user's own git does in a sparse checkout, and a local edit to it is captured.
      "-c",
      "core.sparseCheckout=true",
      // Git keeps an untracked cache only for the untracked mode its config names (git 2.39 serves
      // --untracked-files=all from it, listing unchanged directories' files without reading them).
      "-c",
      "status.showUntrackedFiles=all",
      "status",
      "--porcelain=2",
      "-z",
      "--untracked-files=all",
      "--no-renames",
      // A submodule's checked-out commit counts (its own content does not): git only reads its HEAD.
      "--ignore-submodules=dirty",
    ];
    if (prefix !== "") args.push("--", relBytes(prefix).toString("utf8"));
    // A capture compresses only once status has answered: zlib's module loads, and its first
    // stream's one-time set-up (~1 ms, against ~0.1 ms for each later one) runs, while status does.
    whenGitRuns(() => void zlib().deflateSync(Buffer.alloc(0)));
    trace("capture: status started");
    let stdout: Buffer;
    let unreadable: RelPath[] = [];
    try {
      const running = runGit(args, { cwd: worktreeRoot, env });
      options.spawned?.();
      // Its process, if it can wait for this one's end, starts now, while status runs; so do
      // those others that wait for it (a push after the turn).
      if (deferred) copyDeferred = ctx.prepareStatusBuild?.() ?? { waiting: null };
      gitRunning();
      const done = await running;
      stdout = done.stdout;
      unreadable = unreadableDirs(done.stderr);
      trace("capture: status done");
      if (persist) await privateCopy!.markPersisted(watch?.watchStarted ?? false).catch(() => {});
    } catch (error) {
      if (!copy) throw error;
      // A damaged private copy is dropped (made again next time), with the lock a killed git
      // left on it (a live one is seconds old); this status reads the user's without writing
      // it. Awaited here: the temporary git dir must outlive it.
      await fs.rm(copy, { force: true });
      const lock = await fs.stat(`${copy}.lock`).catch(() => null);
      if (lock && Date.now() - lock.mtimeMs > 60_000) await fs.rm(`${copy}.lock`, { force: true });
      const readOnly = args.map((arg) =>
        arg.startsWith("core.fsmonitor=")
          ? "core.fsmonitor=false"
          : arg.startsWith("core.untrackedCache=")
            ? "core.untrackedCache=keep"
            : arg,
      );
      const { stdout, stderr } = await runGit(readOnly, {
        cwd: worktreeRoot,
        env: { ...env, GIT_INDEX_FILE: userIndex, GIT_OPTIONAL_LOCKS: "0" },
      });
      const parsed = parseSettingAside(stdout, dependencyDirs, prefix);
      return { ...parsed, indexFile: userIndex, copyDeferred, unreadableDirs: unreadableDirs(stderr) };
    }
    const { entries: parsed, dependencyDirFiles } = parseSettingAside(stdout, dependencyDirs, prefix);
    // No untracked cache: git looked at everything.
    if (!copy)
      return { entries: parsed, dependencyDirFiles, indexFile, copyDeferred, unreadableDirs: unreadable };
    // Read-only helpers for the rare corrections, run in the same git directory.
    const readOnlyEnv = { ...env, GIT_OPTIONAL_LOCKS: "0" };
    const pathspec = (dir: RelPath) => `${relBytes(dir).toString("utf8")}/`;
    const entries = await reconcileNestedRepos(
      parsed,
      worktreeRoot,
      async (dir) =>
        (await runGit(["ls-files", "-z", "--", pathspec(dir)], { cwd: worktreeRoot, env: readOnlyEnv }))
          .stdout.length > 0,
      async (dir) => {
        const listed = await runGit(
          [...config, "ls-files", "-o", "--exclude-standard", "-z", "--", pathspec(dir)],
          {
            cwd: worktreeRoot,
            env: readOnlyEnv,
          },
        );
        return splitNul(listed.stdout).map(relFromBytes);
      },
    );
    return { entries, dependencyDirFiles, indexFile, copyDeferred, unreadableDirs: unreadable };
  } finally {
    removeThrowawayGitDir(tempGitDir);
  }
}

/**
 * The private index status runs against: a copy of the user's index, made again whenever the
 * user's git writes a new one (its checksum changes). Null for a split index, whose shared part
 * git looks for beside the user's index only: then status reads the user's index without writing.
 * "deferred" where a detached process is to make the copy (or is making it), unless `build`
 * (that process): status then also reads the user's index.
 */
async function privateIndex(
  storeDir: string,
  userGitDir: string,
  build: boolean,
  ignoreCase: boolean,
): Promise<PrivateIndex | "deferred" | null> {
  if (usesSplitIndex(userGitDir)) return null;
  const userIndex = path.join(userGitDir, "index");
  const target = path.join(storeDir, STORE_FILES.statusIndex);
  const stampFile = path.join(storeDir, STORE_FILES.statusIndexSource);
  const checksum = await indexChecksum(userIndex);
  const stamp = await readJson<IndexStamp | null>(stampFile, null);
  const present = existsSync(target);
  // Git's untracked cache does not record core.ignoreCase: a copy made under the other value
  // would answer with the other value's verdicts, so it is made again.
  const current =
    stamp?.source === checksum &&
    (stamp.ignoreCase ?? false) === ignoreCase &&
    (present || checksum === null);
  const writes = current && Number.isInteger(stamp?.writes) ? stamp!.writes! : 0;
  const writtenAt = current && typeof stamp?.writtenAt === "number" ? stamp.writtenAt : 0;
  const index: PrivateIndex = {
    file: target,
    due: (watchman, watchStarted) =>
      watchStarted ||
      writes < (watchman ? WATCHMAN_TOKEN_WRITES : 1) ||
      Date.now() - writtenAt >= PERSIST_INTERVAL_MS,
    markPersisted: (watchStarted) =>
      writeFileAtomic(
        stampFile,
        JSON.stringify({
          source: checksum,
          ignoreCase,
          writes: watchStarted ? 1 : writes + 1,
          writtenAt: Date.now(),
        } satisfies IndexStamp),
        0o600,
        false, // only timing: a lost update costs one more index write
      ),
  };
  if (!build && (await buildInProgress(storeDir))) return "deferred";
  if (current) return index;
  if (!build && (await buildInBackground(userIndex))) return "deferred";
  const temp = `${target}.tmp-${process.pid}-${randomHex(4)}`;
  if (checksum === null) await fs.rm(target, { force: true });
  else {
    // The copy keeps (just under) the original's mtime: git treats entries modified at or after
    // its index's mtime as "racily clean" and compares their content, and a fresh mtime would
    // make it trust a same-size edit made within the file system's timestamp granularity.
    // Synchronous: status waits for the copy, and each call's thread-pool round trip cost more
    // than the call itself (the copy of a 10 MB index included).
    const { mtimeMs, atime } = statSync(userIndex);
    copyFileSync(userIndex, temp);
    chmodSync(temp, 0o600); // private, as everything under the data home
    utimesSync(temp, atime, new Date(Math.floor(mtimeMs) - 1));
    renameSync(temp, target);
  }
  // Unflushed, like the copy: whatever index status reads, its answer is right (it compares the
  // work tree with that index and the index with HEAD), and flushing this stamp would make the file
  // system write out the fresh 10 MB copy first (~20 ms on 100k files).
  await writeFileAtomic(
    stampFile,
    JSON.stringify({ source: checksum, ignoreCase } satisfies IndexStamp),
    0o600,
    false,
  );
  return index;
}

/** Which user index the private copy was made from, and when status last wrote it. */
interface IndexStamp {
  source: string | null;
  /** The core.ignoreCase its untracked cache was made under (absent: false). */
  ignoreCase?: boolean;
  /** Statuses that wrote the copy since it was made (or, with Watchman, the watch began). */
  writes?: number;
  writtenAt?: number;
}

interface PrivateIndex {
  file: string;
  /** Whether status should write its caches into the copy this time. */
  due: (watchman: boolean, watchStarted: boolean) => boolean;
  markPersisted: (watchStarted: boolean) => Promise<void>;
}

/**
 * Status rewrites the whole copy (~60 ms for 100k files) whenever a cached directory changed
 * (a file created, deleted or renamed into it, as every restore does) or, with Watchman, to record
 * its new token. Rewriting it each time costs more than it saves: a status reads again only the
 * directories changed since the last write (a file whose stat changed but not its content is
 * hashed again), and Watchman answers from an older token with every file changed since. So
 * the copy is written by the first status after it was made (with Watchman the first two after
 * the watch began: git's first token is its own, the second Watchman's), then at most this often.
 */
const PERSIST_INTERVAL_MS = 60_000;
const WATCHMAN_TOKEN_WRITES = 2;
