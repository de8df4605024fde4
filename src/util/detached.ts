import { randomHex } from "./crypto.js";
import type { ChildProcess } from "node:child_process";
import { childProcess } from "./child-process.js";
import { closeSync, existsSync, openSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { trace } from "./trace.js";

/** Set by the command-line tool for a command that ends once its work is done (not a server). */
let shortLived = false;

export function markProcessShortLived(): void {
  shortLived = true;
}

let whileGitRuns: (() => void)[] = [];

/**
 * In a short-lived process, runs `work` once this command has started its long git process (a
 * capture's status), where a spawn costs the command nothing: it blocks this thread for a few
 * milliseconds while the command waits on git anyway. False (and `work` never runs) elsewhere.
 */
export function whenGitRuns(work: () => void): boolean {
  if (!shortLived) return false;
  whileGitRuns.push(work);
  return true;
}

/** Called once a command's long git process has started (see `whenGitRuns`). */
export function gitRunning(): void {
  const waiting = whileGitRuns;
  whileGitRuns = [];
  for (const work of waiting) {
    try {
      work();
    } catch {
      // what could not start here starts, if at all, when it is wanted
    }
  }
}

/**
 * A child started ahead, once this command's long git process runs (see `whenGitRuns`), that
 * waits on its input: until `take` it keeps this process from nothing, and should this process
 * end first, its input ends and it exits. `start` returns the child and what goes with it (its
 * collected output, say), both handed out by `take`.
 */
export class WaitingChild<T> {
  private waiting: { child: ChildProcess; with: T } | null = null;

  constructor(start: () => { child: ChildProcess; with: T } | null) {
    whenGitRuns(() => {
      const started = start();
      if (!started) return;
      const { child } = started;
      child.on("error", () => {}); // never started: `take` finds it gone
      child.stdin?.on("error", () => {}); // gone before its input: its exit says so
      for (const stream of child.stdio) (stream as Socket | null | undefined)?.unref?.();
      child.unref();
      this.waiting = started;
    });
  }

  /** The child, now keeping this process alive until it ends; null where none is waiting (not started, or gone). */
  take(): { child: ChildProcess; with: T } | null {
    const waiting = this.waiting;
    this.waiting = null;
    const child = waiting?.child;
    if (!child?.stdin || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      return null;
    }
    child.ref();
    for (const stream of child.stdio) (stream as Socket | null | undefined)?.ref?.();
    return waiting;
  }
}

/**
 * In a short-lived process, starts a worker that first waits, in a shell, for this process to
 * end, and then runs only if `claimFile` holds `token` (one line): the caller writes it there
 * once it wants the work done, and otherwise the shell just exits. Spawned early (beside a long
 * git process), it spares the end of the command a spawn: one made there cost a first snapshot
 * ~20 ms of its process's exit, and a child spawned early nothing. The end of this process is
 * the end of a socket only it holds, however it ends; Node closes that socket early in its own
 * teardown, so the shell lets 0.1 s pass before the worker's start competes with it for the
 * cores (should `sleep` refuse a fraction, it just goes on). False where it cannot be done.
 */
export function startDetachedWorkerAfterExit(
  candidates: URL[],
  args: string[],
  cwd: string,
  logFile: string,
  claimFile: string,
  token: string,
  /** Whether the shell removes the claim once it holds the token (a go-ahead, not a lock). */
  consume = false,
): boolean {
  if (!shortLived || process.platform === "win32" || !existsSync("/bin/sh")) return false;
  const script = `read -r _ <&3; exec 3<&-; sleep 0.1; { IFS= read -r owner < "$1"; } 2>/dev/null; [ "$owner" = "$2" ] || exit 0; ${
    consume ? 'rm -f "$1"; ' : ""
  }shift 2; exec "$@"`;
  return start(candidates, logFile, (worker, log) =>
    childProcess().spawn(
      "/bin/sh",
      ["-c", script, "sh", claimFile, token, process.execPath, worker, ...args],
      {
        cwd,
        detached: true,
        stdio: ["ignore", "ignore", log, "pipe"],
      },
    ),
  );
}

/** A detached worker: its script's candidates (see `startDetachedWorker`), arguments, and files. */
export interface WorkerSpec {
  /** What it does, for the trace. */
  name: string;
  candidates: URL[];
  args: string[];
  cwd: string;
  logFile: string;
  /** Where the go-ahead goes (a token is appended to the name). */
  goPrefix: string;
}

/**
 * A detached worker that a command may want started once it has done its work (a push after a
 * turn, the daily retention). Made before that work, in a short-lived process its process is
 * started as soon as the command's status runs and waits for the command's end (see
 * `startDetachedWorkerAfterExit`), going on only with the go-ahead `start` writes, which the
 * shell removes: one spawned at the command's end had cost it ~20 ms. Elsewhere, or when that
 * could not be done, `start` starts the worker at once.
 */
export class WorkerAfterCommand {
  private waiting: { go: string; token: string } | null = null;
  private started = false;

  constructor(private readonly spec: WorkerSpec) {
    whenGitRuns(() => {
      if (this.started) return; // started already: nothing left to wait for
      const token = randomHex(8);
      const go = `${spec.goPrefix}-${token}`;
      const { candidates, args, cwd, logFile } = spec;
      if (startDetachedWorkerAfterExit(candidates, args, cwd, logFile, go, token, true)) {
        this.waiting = { go, token };
      }
    });
  }

  /** Lets the waiting process go on once this command ends, or starts the worker now. */
  start(): boolean {
    const waiting = this.waiting;
    this.waiting = null;
    this.started = true;
    if (waiting) {
      trace(`${this.spec.name}: its process waits for this command's end`);
      writeFileSync(waiting.go, `${waiting.token}\n`, { mode: 0o600 });
      return true;
    }
    return startWorkerNow(this.spec);
  }
}

/** Starts the worker of `spec` at once (see `startDetachedWorker`). */
export function startWorkerNow(spec: WorkerSpec): boolean {
  return startDetachedWorker(spec.candidates, spec.args, spec.cwd, spec.logFile);
}

/**
 * Starts a Node worker script detached from this process, so the caller (an agent's hook) never
 * waits for it: stdin and stdout closed, stderr appended to `logFile` (private). `candidates` are
 * where the script may be, relative to the calling module: beside it when running from dist/, or
 * in a subfolder when the caller is the bundled CLI. False when none exists.
 */
export function startDetachedWorker(
  candidates: URL[],
  args: string[],
  cwd: string,
  logFile: string,
): boolean {
  return start(candidates, logFile, (worker, log) =>
    childProcess().spawn(process.execPath, [worker, ...args], {
      cwd,
      detached: true,
      stdio: ["ignore", "ignore", log],
    }),
  );
}

function start(
  candidates: URL[],
  logFile: string,
  launch: (worker: string, log: number) => ChildProcess,
): boolean {
  const worker = candidates.map((url) => fileURLToPath(url)).find((file) => existsSync(file));
  if (!worker) return false;
  const log = openSync(logFile, "a", 0o600);
  try {
    const child = launch(worker, log);
    child.on("error", () => {});
    // Neither the child nor the socket it waits on keeps this process alive.
    (child.stdio[3] as Socket | null | undefined)?.unref();
    child.unref();
    return true;
  } finally {
    closeSync(log);
  }
}
