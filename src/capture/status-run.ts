import { promises as fs } from "node:fs";
import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { type StatusEntry, unreadablePaths } from "../git/status.js";
import { type RelPath, relBytes, relFromBytes } from "../paths.js";
import { gitRunning, whenGitRuns } from "../util/detached.js";
import { zlib } from "../util/zlib.js";
import { removeThrowawayGitDir, throwawayGitDir } from "./status-gitdir.js";
import { trace } from "../util/trace.js";
import type { CaptureContext } from "./context.js";
import { fsmonitorOptions } from "./fsmonitor.js";
import type { DeferredBuild } from "./status-cache.js";
import { privateIndex } from "./private-index.js";
import {
  aheadGitDir,
  discardStatusAhead,
  plannedStatus,
  type StatusPlan,
  statusAheadFrom,
} from "./status-ahead.js";
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
  /** Directories status could not list, tracked files it could not stat (repository-relative; see `unreadablePaths`). */
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
  const headLine = head ?? "ref: refs/heads/ghostcommit-unborn";
  // A status started ahead ran against the copy as it was: not one made again just now.
  if (!privateCopy?.reused) discardStatusAhead("the private index copy is made again");
  const tempGitDir = aheadGitDir(headLine, ctx.paths.dir) ?? (await throwawayGitDir(ctx.paths, headLine));
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
    // What the next command from this directory may start ahead: never a status that writes.
    const plan: StatusPlan | null =
      copy && fsmonitor.length === 0 && !options.buildCopy
        ? {
            from: statusAheadFrom(),
            cwd: worktreeRoot,
            args,
            env: { GIT_WORK_TREE: worktreeRoot, GIT_INDEX_FILE: copy, GIT_OPTIONAL_LOCKS: "0" },
            head: headLine,
            store: ctx.paths.dir,
            userIndex,
          }
        : null;
    // A capture compresses only once status has answered: zlib's module loads, and its first
    // stream's one-time set-up (~1 ms, against ~0.1 ms for each later one) runs, while status does.
    whenGitRuns(() => void zlib().deflateSync(Buffer.alloc(0)));
    trace("capture: status started");
    let stdout: Buffer;
    let unreadable: RelPath[] = [];
    try {
      const running = plannedStatus(plan, persist, () => runGit(args, { cwd: worktreeRoot, env }));
      options.spawned?.();
      // Its process, if it can wait for this one's end, starts now, while status runs; so do
      // those others that wait for it (a push after the turn).
      if (deferred) copyDeferred = ctx.prepareStatusBuild?.() ?? { waiting: null };
      gitRunning();
      const done = await running;
      stdout = done.stdout;
      unreadable = unreadablePaths(done.stderr);
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
      return { ...parsed, indexFile: userIndex, copyDeferred, unreadableDirs: unreadablePaths(stderr) };
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
