import { readFileSync } from "node:fs";
import path from "node:path";
import { startWorkerNow, WorkerAfterCommand, type WorkerSpec } from "../util/detached.js";
import type { Settings } from "../config.js";
import { GhostcommitError } from "../errors.js";
import type { GcOptions, GcReport } from "../types.js";
import type { StoreContext } from "../store/context.js";
import { collectGarbage, type GcPolicy, type Protected } from "./gc.js";
import { forgetExpiredSessions } from "../session/forget.js";
import { readAllJournals } from "../session/journal.js";
import { openTurnOf } from "../session/model.js";
import { STORE_FILES, readJson, writeFileAtomic } from "../store/layout.js";
import type { StoredSnapshot } from "../store/store.js";
import { manyLooseObjects } from "./loose-count.js";

const DAY_MS = 24 * 3600 * 1000;
/** A gc for many loose objects comes at most this often. */
const LOOSE_GC_GAP_MS = 10 * 60 * 1000;

/**
 * Snapshots retention must keep whatever the policy says: the newest turn snapshots of every
 * session active in the last day. (The latest restore's safety snapshot is kept by gc itself.)
 */
export async function protectedSnapshots(
  engine: StoreContext,
  snapshots: StoredSnapshot[],
): Promise<Protected> {
  const keep = new Set<string>();
  const dayAgoMicros = (Date.now() - DAY_MS) * 1000;
  const newestPerSession = new Map<string, StoredSnapshot[]>();
  for (const snapshot of snapshots) {
    const session = snapshot.meta.session;
    if (!session || snapshot.meta.t < dayAgoMicros) continue;
    if (snapshot.meta.kind !== "turn-before" && snapshot.meta.kind !== "turn-after") continue;
    const list = newestPerSession.get(session) ?? [];
    list.push(snapshot);
    newestPerSession.set(session, list);
  }
  for (const list of newestPerSession.values()) {
    // snapshots come newest first: keep the newest turn's before and after
    const newestTurn = list[0].meta.turn;
    for (const s of list) if (s.meta.turn === newestTurn) keep.add(s.id);
  }
  // An open turn's last progress mark decides, at its end, which of its changes came after the
  // agent's last known action (after an interrupt): only the session's journal names it.
  const trees = (await readAllJournals(engine.paths.sessionsDir)).flatMap((state) => {
    const progress = openTurnOf(state)?.progress;
    return progress ? [progress] : [];
  });
  return { ids: keep, trees };
}

/** The retention policy from the workspace's settings: expire by age, then by store size. */
export function retentionPolicy(settings: Settings, now = Date.now()): GcPolicy {
  return { olderThan: now - settings.retentionDays * DAY_MS, maxBytes: settings.maxStoreBytes };
}

/** A wrong value as its caller wrote it: the string "3" quoted, unlike the number 3. */
function shownValue(value: unknown): string {
  return typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
}

/** The retention policy, tightened by a caller's `olderThanMs` and `keep` (checked as the CLI's flags). */
export function manualPolicy(settings: Settings, options: GcOptions): GcPolicy {
  const policy = retentionPolicy(settings);
  const { olderThanMs, keep } = options;
  if (olderThanMs !== undefined && !(typeof olderThanMs === "number" && olderThanMs >= 0)) {
    throw new GhostcommitError(
      "usage",
      `olderThanMs must be a number of milliseconds ≥ 0, not ${shownValue(olderThanMs)}`,
    );
  }
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) {
    throw new GhostcommitError("usage", `keep must be a whole number ≥ 0, not ${shownValue(keep)}`);
  }
  if (olderThanMs !== undefined) policy.olderThan = Date.now() - olderThanMs;
  if (keep !== undefined) policy.keep = keep;
  return policy;
}

/**
 * Expires snapshots by `policy`, then forgets the sessions nothing is left of that were last
 * active before `retentionDays` (whatever `policy` says: `--older-than` tightens what snapshots
 * expire, not how long a conversation is remembered).
 */
export async function collectAndForget(engine: StoreContext, policy: GcPolicy): Promise<GcReport> {
  const outcome = await collectGarbage(engine, policy, (s) => protectedSnapshots(engine, s));
  // After the gc lock is let go: each journal is removed under its own session's lock.
  const forgottenSessions = await forgetExpiredSessions(
    engine,
    retentionPolicy(engine.settings).olderThan ?? 0,
  );
  return { ...outcome, forgottenSessions };
}

/** Runs the retention policy now (what `gc` without flags does). */
export function runRetention(engine: StoreContext): Promise<GcReport> {
  return collectAndForget(engine, retentionPolicy(engine.settings));
}

/**
 * Made before a snapshot or a turn's end: where retention is due, its worker's process can start
 * beside that command's status and wait for its end (see `WorkerAfterCommand`). Null where it is
 * not due, or the stamp cannot be read (then `maybeRunRetention` decides alone).
 */
export function prepareRetention(engine: StoreContext, now = Date.now()): WorkerAfterCommand | null {
  try {
    const stamp = JSON.parse(readFileSync(path.join(engine.paths.dir, STORE_FILES.retention), "utf8"));
    if (!isDue(engine, stamp, now)) return null;
    return new WorkerAfterCommand(gcWorker(engine));
  } catch {
    return null;
  }
}

/**
 * Retention that runs by itself, after a turn ends: at most once a day per store (sooner for many
 * loose objects: see isDue), tracked by a timestamp file, so the common path costs one small read. The run itself (it may repack) goes
 * to a detached worker process (`prepared`, where one waits) so the agent never waits for it;
 * its errors go to the store's log. Returns what it did.
 */
export async function maybeRunRetention(
  engine: StoreContext,
  now = Date.now(),
  prepared: WorkerAfterCommand | null = null,
): Promise<"skipped" | "started" | "ran"> {
  try {
    const file = path.join(engine.paths.dir, STORE_FILES.retention);
    const stamp = await readJson<{ lastRun?: number }>(file, {});
    const due = isDue(engine, stamp, now);
    if (typeof stamp.lastRun === "number" && !due) return "skipped";
    // Claim the run first so concurrent processes do not all start one; a new store starts the clock.
    // Not flushed: a stamp lost in a crash only restarts the clock, and a new store's first
    // snapshot would otherwise wait for a disk flush that protects nothing.
    await writeFileAtomic(file, JSON.stringify({ lastRun: now }), 0o600, false);
    if (!due) return "skipped";
    if (prepared ? prepared.start() : startWorkerNow(gcWorker(engine))) return "started";
    await runRetention(engine);
    return "ran";
  } catch {
    return "skipped"; // retention must never fail the turn it follows
  }
}

/**
 * Once a day; sooner, though not within LOOSE_GC_GAP_MS of the last run, when the shadow store
 * holds many loose objects (packing them is most of what it frees then; a repo store's objects
 * are the user's repository's, packed by its own git).
 */
function isDue(engine: StoreContext, stamp: { lastRun?: unknown } | null, now: number): boolean {
  const last = stamp?.lastRun;
  if (typeof last !== "number") return false;
  if (now - last >= DAY_MS) return true;
  return (
    engine.refs.kind === "shadow" && now - last >= LOOSE_GC_GAP_MS && manyLooseObjects(engine.refs.objectsDir)
  );
}

function gcWorker(engine: StoreContext): WorkerSpec {
  return {
    name: "retention",
    // dist/maintenance/retention.js, or the bundled CLI dist/cli.cjs beside dist/maintenance/.
    candidates: [
      new URL("./gc-worker.js", import.meta.url),
      new URL("./maintenance/gc-worker.js", import.meta.url),
    ],
    args: [engine.root, engine.refs.kind],
    cwd: engine.root,
    logFile: engine.paths.logFile,
    goPrefix: path.join(engine.paths.dir, STORE_FILES.gcGo),
  };
}
