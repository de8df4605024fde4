import { randomBytes } from "node:crypto";
import { promises as fs, writeFileSync } from "node:fs";
import { startDetachedWorker, startDetachedWorkerAfterExit, whenGitRuns } from "../util/detached.js";
import { trace } from "../util/trace.js";
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
}

const STATUS_FILE = STORE_FILES.pushStatus;
const LOG_FILE = STORE_FILES.pushLog;

// dist/session/auto-push.js, or the bundled CLI dist/ghostcommit.mjs beside dist/session/.
const WORKER = [
  new URL("./push-worker.js", import.meta.url),
  new URL("./session/push-worker.js", import.meta.url),
];

/**
 * With `"push": {"after": "turn"}`, the push a turn's end starts in a detached process. The turn
 * (and the agent's hook) never waits for it: the child is unreferenced and its output goes to a
 * file. In a command's short-lived process its process is started while the turn's status runs,
 * and waits for the command's end (see `startDetachedWorkerAfterExit`): spawned as the command
 * ended, it had cost the command's exit ~20 ms. Never throws.
 */
export class PushAfterTurn {
  private waiting: { claim: string; token: string } | null = null;

  /** Made before the turn ends, so the push's process can start beside the turn's status. */
  constructor(private readonly engine: StoreContext) {
    const push = engine.settings.push;
    if (push?.after !== "turn") return;
    whenGitRuns(() => {
      const token = randomBytes(8).toString("hex");
      const claim = path.join(engine.paths.dir, `${STORE_FILES.pushGo}-${token}`);
      const args = [engine.root, engine.refs.kind, push.remote];
      const log = path.join(engine.paths.dir, LOG_FILE);
      if (startDetachedWorkerAfterExit(WORKER, args, engine.root, log, claim, token, true)) {
        this.waiting = { claim, token };
        trace("push: its process waits for this command's end");
      }
    });
  }

  /** Once the turn has ended: lets the waiting process go on when this one ends, or starts one. */
  start(): boolean {
    const push = this.engine.settings.push;
    if (push?.after !== "turn") return false;
    try {
      if (this.waiting) {
        writeFileSync(this.waiting.claim, `${this.waiting.token}\n`, { mode: 0o600 });
        return true;
      }
      const args = [this.engine.root, this.engine.refs.kind, push.remote];
      return startDetachedWorker(WORKER, args, this.engine.root, path.join(this.engine.paths.dir, LOG_FILE));
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
  try {
    return await pushWorkspace(engine, cwd, { remote });
  } catch (error) {
    status.ok = false;
    status.message = error instanceof Error ? error.message : String(error);
    await fs.appendFile(path.join(engine.paths.dir, LOG_FILE), `${JSON.stringify(status)}\n`).catch(() => {});
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
