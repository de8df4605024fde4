import { promises as fs } from "node:fs";
import { GhostcommitError } from "../errors.js";
import { WorkerAfterCommand } from "../util/detached.js";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import type { PushReport } from "../types.js";
import { pushWorkspace } from "./push.js";

/** The outcome of the latest background push, kept for `doctor`. */
export interface BackgroundPushStatus {
  t: string;
  ok: boolean;
  remote: string;
  message?: string;
  /** The push was refused for these files the repository ignores (see `refuseIgnoredContent`). */
  ignored?: string[];
  /** Sessions left out (the others were sent): the remote holds another history under their ids. */
  leftOut?: string[];
  /** The push's temporary refs the remote kept (a success all the same): see `PushReport`. */
  refsLeft?: { refs: string[]; reason: string };
}

const STATUS_FILE = STORE_FILES.pushStatus;
const LOG_FILE = STORE_FILES.pushLog;

/**
 * With `"push": {"after": "turn"}`, the push a turn's end starts in a detached process. The turn
 * (and the agent's hook) never waits for it: the child is unreferenced and its output goes to a
 * file. Made before the turn ends, so that from the command line its process can start beside the
 * turn's status and wait for the command's end (see `WorkerAfterCommand`). Never throws.
 */
export class PushAfterTurn {
  private readonly worker: WorkerAfterCommand | null = null;

  constructor(engine: StoreContext) {
    const push = engine.settings.push;
    if (push?.after !== "turn") return;
    this.worker = new WorkerAfterCommand({
      name: "push",
      // dist/session/auto-push.js, or the bundled CLI dist/cli.cjs beside dist/session/.
      candidates: [
        new URL("./push-worker.js", import.meta.url),
        new URL("./session/push-worker.js", import.meta.url),
      ],
      args: [engine.root, engine.refs.kind, push.remote],
      cwd: engine.root,
      logFile: path.join(engine.paths.dir, LOG_FILE),
      goPrefix: path.join(engine.paths.dir, STORE_FILES.pushGo),
    });
  }

  /** Once the turn has ended. */
  start(): boolean {
    if (!this.worker) return false;
    try {
      return this.worker.start();
    } catch {
      return false; // a push that cannot start is a missed push, never a failed turn
    }
  }
}

/** Runs a push on behalf of a turn and records how it went (the next one retries anything missed). */
export async function runBackgroundPush(
  engine: StoreContext,
  cwd: string,
  remote: string,
): Promise<PushReport> {
  const status: BackgroundPushStatus = { t: new Date().toISOString(), ok: true, remote };
  const failed = (message: string) => {
    Object.assign(status, { ok: false, message });
    return fs
      .appendFile(path.join(engine.paths.dir, LOG_FILE), `${JSON.stringify(status)}\n`)
      .catch(() => {});
  };
  try {
    const report = await pushWorkspace(
      engine,
      cwd,
      { remote, includeIgnored: engine.settings.push?.includeIgnored },
      { leaveConflicting: true },
    );
    if (report.refsLeft) status.refsLeft = report.refsLeft;
    if (report.leftOut) {
      status.leftOut = report.leftOut.map((c) => c.session);
      const shown = report.leftOut.map((c) => `${c.session} (pushed from ${c.host})`).join(", ");
      await failed(
        `${report.url} holds a different history under the same session id: ${shown}; ${report.leftOut.length === 1 ? "it was" : "they were"} left out, the other sessions sent`,
      );
    }
    return report;
  } catch (error) {
    // The one refusal a retry cannot get past: the same files stay in the session's snapshots.
    if (GhostcommitError.is(error, "conflict") && error.data.snapshots) {
      status.ignored = error.data.conflicts;
    }
    await failed(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    await writeFileAtomic(path.join(engine.paths.dir, STATUS_FILE), `${JSON.stringify(status)}\n`).catch(
      () => {},
    );
  }
}

/** The latest background push's outcome, or null when none ran. */
export async function backgroundPushStatus(engine: StoreContext): Promise<BackgroundPushStatus | null> {
  const status = await readJson<BackgroundPushStatus | null>(path.join(engine.paths.dir, STATUS_FILE), null);
  return status && typeof status.ok === "boolean" && typeof status.t === "string" ? status : null;
}

export function backgroundPushLog(engine: StoreContext): string {
  return path.join(engine.paths.dir, LOG_FILE);
}
