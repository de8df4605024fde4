import { promises as fs } from "node:fs";
import path from "node:path";
import { type Settings, WATCHMAN_AUTO_FILES } from "../config.js";
import { indexEntryCount } from "../git/index-file.js";
import type { WatchmanUse } from "../types.js";
import { readJson, STORE_FILES, type StorePaths, writeFileAtomic } from "../store/layout.js";
import { announce } from "../util/announce.js";
import { formatCount, isoFromMillis } from "../util/format.js";
import { findOnPath, shellQuote } from "../util/shell.js";
import { spawnText } from "../util/spawn-text.js";
import { answerAhead, NO_DAEMON, NOT_WATCHED } from "./fsmonitor-answer.js";
import { FSMONITOR_HOOK } from "./fsmonitor-hook.js";

/**
 * Watchman through git's own fsmonitor hook protocol: status then asks Watchman which paths
 * changed instead of checking every file, and with the untracked cache it reads only the
 * directories Watchman names. Used where Watchman is installed, unless the config says
 * `"watchman": false`; never required (without it, status checks every file as before).
 */

/** What the store remembers of the watch (`watchman.json`). */
interface WatchState {
  root: string;
  /** The watch did not exist before ghostcommit asked for it. */
  startedByGhostcommit: boolean;
  since: string;
  /** Watchman could not watch it (retried an hour later). */
  failed?: string;
  /** Watchman's socket, where this process asks it ahead of status (see fsmonitor-answer.ts). */
  socket?: string;
}

const RETRY_FAILED_WATCH_MS = 60 * 60 * 1000;

type Tools = { watchman: string; perl: string } | { reason: string };

/** Whether Watchman can serve this work tree, and with which programs. */
async function tools(settings: Settings, worktreeRoot: string, userIndex: string): Promise<Tools> {
  if (!settings.watchman) return { reason: 'turned off by "watchman": false in the config' };
  if (settings.watchman === "auto" && ((await indexEntryCount(userIndex)) ?? 0) < WATCHMAN_AUTO_FILES) {
    return {
      reason: `fewer than ${formatCount(WATCHMAN_AUTO_FILES)} tracked files, where status is fast without it ("watchman": true uses it anyway)`,
    };
  }
  const [watchman, perl] = await Promise.all([findOnPath("watchman"), findOnPath("perl")]);
  if (!watchman) return { reason: "Watchman is not installed" };
  if (!perl) return { reason: "perl, which runs git's fsmonitor hook, is not installed" };
  // A .watchmanconfig that ignores directories would hide changes there from status.
  const config = await fs.readFile(path.join(worktreeRoot, ".watchmanconfig"), "utf8").catch(() => null);
  if (config !== null && /"ignore_dirs"\s*:\s*\[\s*"/.test(config)) {
    return { reason: ".watchmanconfig ignores directories, whose changes status would then miss" };
  }
  return { watchman, perl };
}

/** The `-c` options that make a status use Watchman (none: it is not used), and whether this call began the watch. */
export interface FsmonitorUse {
  options: string[];
  watchStarted: boolean;
}

/**
 * The `-c` options that make a status use Watchman, or none. The first time, starts watching
 * the work tree (and Watchman's daemon, if it was not running): announced once (on stderr, or in
 * the answer of the hook event that started it) and reported by `doctor` from then on.
 */
export async function fsmonitorOptions(
  paths: StorePaths,
  settings: Settings,
  worktreeRoot: string,
  userIndex: string,
  /** The index status reads, and its git directory (where an answer asked ahead is left for it). */
  [statusIndex, statusGitDir]: [string, string],
): Promise<FsmonitorUse> {
  const unused = { options: [], watchStarted: false };
  const found = await tools(settings, worktreeRoot, userIndex);
  if ("reason" in found) return unused;
  const stateFile = path.join(paths.dir, STORE_FILES.watchman);
  const lostMark = path.join(paths.dir, STORE_FILES.watchmanLost);
  let state = await readJson<WatchState | null>(stateFile, null);
  const before = state;
  if (
    await fs.rm(lostMark).then(
      () => true,
      () => false,
    )
  )
    state = null; // the hook found no watch, or no daemon (or a restarted one): watch again
  if (state?.root === worktreeRoot && state.failed) {
    if (Date.now() - Date.parse(state.since) < RETRY_FAILED_WATCH_MS) return unused;
    state = null;
  }
  let watchStarted = state?.root !== worktreeRoot;
  if (state?.root !== worktreeRoot) {
    state = await watch(found.watchman, worktreeRoot, stateFile, before);
    if (state.failed) return unused;
  }
  if (state.socket === undefined) {
    state.socket = (await socketOf(found.watchman)) ?? "";
    await writeFileAtomic(stateFile, JSON.stringify(state));
  }
  const askAhead = async (known: WatchState) =>
    known.socket ? await answerAhead(known.socket, worktreeRoot, statusIndex, statusGitDir) : null;
  let ahead = await askAhead(state);
  if (ahead === NO_DAEMON || ahead === NOT_WATCHED) {
    // The daemon is gone, or its watch was removed: this snapshot watches again (starting the
    // daemon), and its status is answered from scratch (the old clock names an older watch).
    state = await watch(found.watchman, worktreeRoot, stateFile, state);
    if (state.failed) return unused;
    watchStarted = true;
    ahead = await askAhead(state);
  }
  if (typeof ahead === "symbol") ahead = null;
  const hook = path.join(paths.dir, STORE_FILES.fsmonitorHook);
  const current = ahead ? FSMONITOR_HOOK : await fs.readFile(hook, "utf8").catch(() => null);
  if (current !== FSMONITOR_HOOK) await writeFileAtomic(hook, FSMONITOR_HOOK, 0o700);
  const command =
    ahead ?? [found.perl, hook, found.watchman, worktreeRoot, lostMark].map(shellQuote).join(" ");
  return { options: ["-c", `core.fsmonitor=${command}`, "-c", "core.fsmonitorHookVersion=2"], watchStarted };
}

/**
 * Watches the work tree (see startWatching), says so where that matters, and records it with the
 * daemon's socket; a watch ghostcommit began stays its own when a restarted daemon watches it
 * again by itself.
 */
async function watch(
  watchman: string,
  root: string,
  stateFile: string,
  before: WatchState | null,
): Promise<WatchState> {
  const { state: began, daemonWasRunning } = await startWatching(watchman, root);
  const ours = before?.root === root && before.startedByGhostcommit;
  const kept = ours && !began.failed;
  const state: WatchState = kept ? { ...began, startedByGhostcommit: true } : began;
  if (!state.failed) state.socket = (await socketOf(watchman)) ?? "";
  await writeFileAtomic(stateFile, JSON.stringify(state));
  const off = `turn this off: "watchman": false in the config, then watchman watch-del ${shellQuote(root)}`;
  // Said once per watch: the first, and one someone removed from a running daemon (watch-del, on
  // purpose). A daemon started again (a reboot, a kill) brings back the watch already told of.
  if (began.startedByGhostcommit && !ours) {
    announce(`Watchman now watches ${root} to make snapshots faster, and keeps running (${off})`);
  } else if (began.startedByGhostcommit && daemonWasRunning) {
    announce(`Watchman watches ${root} again: its watch was removed, and snapshots use it (${off})`);
  }
  return state;
}

/** Where Watchman's daemon listens (`WATCHMAN_SOCK`, as its client reads it, else its own answer). */
async function socketOf(watchman: string): Promise<string | null> {
  if (process.env.WATCHMAN_SOCK) return process.env.WATCHMAN_SOCK;
  const reply = await spawnText(watchman, ["--no-pretty", "--no-spawn", "get-sockname"]);
  try {
    const sockname = (JSON.parse(reply ?? "") as { sockname?: unknown }).sockname;
    return typeof sockname === "string" && path.isAbsolute(sockname) ? sockname : null;
  } catch {
    return null;
  }
}

/** Watches the work tree, starting Watchman's daemon if it was not running (`daemonWasRunning`). */
async function startWatching(
  watchman: string,
  root: string,
): Promise<{ state: WatchState; daemonWasRunning: boolean }> {
  const since = isoFromMillis(Date.now());
  const before = await watchRoots(watchman); // null: no daemon yet
  const daemonWasRunning = before !== null;
  if (before?.includes(root))
    return { state: { root, startedByGhostcommit: false, since }, daemonWasRunning };
  const reply = await spawnText(watchman, ["--no-pretty", "watch", root]);
  let failed: string | undefined;
  try {
    const answer = JSON.parse(reply ?? "") as { watch?: unknown; error?: unknown };
    if (typeof answer.watch !== "string") failed = String(answer.error ?? "no watch");
  } catch {
    failed = "Watchman did not answer";
  }
  const state = { root, startedByGhostcommit: failed === undefined, since, ...(failed ? { failed } : {}) };
  return { state, daemonWasRunning };
}

/** The roots Watchman watches now; null when its daemon is not running (it is not started). */
async function watchRoots(watchman: string): Promise<string[] | null> {
  const reply = await spawnText(watchman, ["--no-pretty", "--no-spawn", "watch-list"]);
  if (reply === null) return null;
  try {
    const roots = (JSON.parse(reply) as { roots?: unknown }).roots;
    return Array.isArray(roots) ? roots.filter((r): r is string => typeof r === "string") : null;
  } catch {
    return null;
  }
}

/** For `doctor`: whether snapshots of this work tree use Watchman, and why (not). Starts nothing. */
export async function watchmanUse(
  paths: StorePaths,
  settings: Settings,
  worktreeRoot: string | null,
  userIndex: string | null,
): Promise<WatchmanUse> {
  if (worktreeRoot === null || userIndex === null)
    return { inUse: false, reason: "only git work trees use it" };
  const found = await tools(settings, worktreeRoot, userIndex);
  const state = await readJson<WatchState | null>(path.join(paths.dir, STORE_FILES.watchman), null);
  const startedWatch = state?.startedByGhostcommit ? state.root : undefined;
  const base = startedWatch ? { startedWatch } : {};
  if ("reason" in found) return { inUse: false, reason: found.reason, ...base };
  if (!state) return { inUse: false, reason: "the next snapshot starts using it", ...base };
  if (state.failed)
    return { inUse: false, reason: `Watchman cannot watch the work tree: ${state.failed}`, ...base };
  const watched = await watchRoots(found.watchman);
  if (watched === null) {
    return { inUse: false, reason: "Watchman's daemon is not running; the next snapshot starts it", ...base };
  }
  if (!watched.includes(worktreeRoot)) {
    return {
      inUse: false,
      reason: "Watchman no longer watches the work tree; the next snapshot watches it again",
      ...base,
    };
  }
  return {
    inUse: true,
    reason: `Watchman watches ${worktreeRoot}${startedWatch ? " (started by ghostcommit)" : ""}`,
    ...base,
  };
}
