import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { baseGitEnv } from "../git/git-env.js";
import { indexChecksumNow } from "../git/index-file.js";
import { childProcess } from "../util/child-process.js";
import { trace } from "../util/trace.js";
import {
  fileMark,
  persistDue,
  planFiles,
  readPlanFor,
  readStamp,
  type StatusPlan,
  writePlan,
} from "./status-plan.js";

export { type IndexStamp, persistDue, type StatusPlan } from "./status-plan.js";

/**
 * A later snapshot's status, started by the command-line loader before the bundle is even read.
 * On a small tree status is a third of a command and loading the bundle, compiling what runs once
 * and the set-up before status another third; started first, status runs while they do.
 *
 * The loader cannot work out what status to run (that needs most of the bundle), so it runs the
 * status the last capture from this directory ran, described in a plan file. The capture then
 * works out its status as always and takes the one started ahead only when it is exactly that:
 * the same arguments, environment, directory and HEAD, against the same private index copy,
 * which neither run writes. Anything that could make them differ and that the arguments do not
 * show (the user's index or `info/exclude` changed, a dead restore's temp files removed, the
 * private copy due to be written) makes the capture kill it and run its own.
 */

/**
 * The oldest a status started ahead may be when the capture takes it: about how much longer than
 * its own status a command may take to get there (a slow machine, a cold start).
 */
const MAX_AGE_MS = 1000;

/** Any non-empty value turns starting status ahead off. */
export const STATUS_AHEAD_OFF = "GHOSTCOMMIT_NO_STATUS_AHEAD";

interface Ahead {
  plan: StatusPlan;
  /** The restores' mark when it started (see `fileMark`), and when it started. */
  restoreMark: string;
  startedAt: number;
  gitDir: string | null;
  child: ChildProcess;
  result: Promise<AheadResult>;
}

export interface AheadResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** Shared by the loader and the bundle it runs, which has its own copy of this module. */
interface Slot {
  /** This command may start status ahead, so its captures keep the plan current. */
  offered: boolean;
  /** The directory the command acts on (`-C`, else where it runs): its plan is named after it. */
  from: string;
  plan: StatusPlan | null;
  ahead: Ahead | null;
}
const SLOT = Symbol.for("ghostcommit.statusAhead");
const slot = (): Slot | undefined => (globalThis as { [SLOT]?: Slot })[SLOT];

/** Makes a throw-away git directory sharing `commonDir`, with `head` as its HEAD. */
export function makeGitDir(
  tmpDir: string,
  commonDir: string,
  head: string,
  suffix: string,
  recursive = true,
): string {
  const dir = path.join(tmpDir, `gitdir-${process.pid}-${suffix}`);
  fs.mkdirSync(dir, { recursive, mode: 0o700 });
  try {
    fs.writeFileSync(path.join(dir, "HEAD"), `${head}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, "commondir"), `${commonDir}\n`, { mode: 0o600 });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

/** Commands that capture the workspace first (`turn begin` and `turn end` each take a snapshot). */
const CAPTURING = new Set(["snapshot", "restore", "rewind", "redo", "turn"]);

/**
 * The command a command line runs and the directory it acts on, as far as the loader can tell
 * without the CLI's parser, when the command captures: null when it does not, or for another
 * store, or in a dry run. A plan found by a word misread would name another status, which the
 * capture does not take.
 */
export function captureTarget(argv: readonly string[]): { command: string; dir: string } | null {
  let command: string | undefined;
  let dir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg.startsWith("-C")) {
      const value = arg === "-C" ? argv[++i] : arg.slice(2);
      if (!value || dir !== undefined) return null;
      dir = path.resolve(value);
    } else if (arg.startsWith("--store") || arg === "--dry-run") return null;
    else if (command === undefined && !arg.startsWith("-")) command = arg;
  }
  return command && CAPTURING.has(command) ? { command, dir: dir ?? process.cwd() } : null;
}

/**
 * Run by the loader for a command that captures (see captureTarget), or an agent's hook whose
 * event does (`hookCaptures`; its plan is its working directory's): starts the planned status,
 * if there is a plan for its directory and the private copy is not due to be written. Never throws.
 */
export function startStatusAhead(argv: readonly string[], hookCaptures = false): void {
  let target: { command: string; dir: string } | null;
  try {
    target = captureTarget(argv) ?? (hookCaptures ? { command: "hook", dir: process.cwd() } : null);
  } catch {
    return; // the current directory was deleted: the command says so
  }
  if (!target) return;
  const state: Slot = { offered: !process.env[STATUS_AHEAD_OFF], from: target.dir, plan: null, ahead: null };
  (globalThis as { [SLOT]?: Slot })[SLOT] = state;
  if (!state.offered) return;
  try {
    const plan = readPlanFor(state.from);
    if (!plan) return;
    state.plan = plan;
    // The capture would make the copy again (your git wrote a new index) or write it: it would
    // not take this status.
    const files = planFiles(plan);
    const stamp = readStamp(files.stamp);
    if (stamp?.source !== indexChecksumNow(plan.userIndex) || persistDue(stamp, false, false)) return;
    // Not while a restore runs (it may be writing files); one that starts later rewrites its
    // mark before its first write, which the capture then sees. In this order, so a restore
    // that takes the lock between the two is seen too.
    const restoreMark = fileMark(files.lastSafety);
    if (fs.existsSync(files.restoreLock)) return;
    const suffix = `${process.hrtime.bigint().toString(16).slice(-8)}a`;
    // Not `recursive`: a store removed since the plan was written is not made again.
    const gitDir = makeGitDir(files.tmpDir, files.gitDir, plan.head, suffix, false);
    const child = childProcess().spawn("git", plan.args, {
      cwd: plan.cwd,
      env: { ...baseGitEnv(), ...plan.env, GIT_DIR: gitDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    state.ahead = { plan, restoreMark, startedAt: performance.now(), gitDir, child, result: collect(child) };
    process.once("exit", () => discardStatusAhead("not used"));
    trace("status ahead: started");
  } catch {
    state.ahead = null; // a plan of another version, a removed store: the capture runs its own
  }
}

function collect(child: ChildProcess): Promise<AheadResult> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", () => resolve({ stdout: Buffer.alloc(0), stderr: "", code: -1 }));
    child.on("close", (code) =>
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8"), code: code ?? -1 }),
    );
  });
}

/** Kills the status started ahead (it only reads) and removes its git directory, unless taken. */
export function discardStatusAhead(reason: string): void {
  const state = slot();
  const ahead = state?.ahead;
  if (!ahead) return;
  state.ahead = null;
  ahead.child.kill("SIGKILL");
  if (ahead.gitDir) {
    for (const name of ["HEAD", "commondir"]) fs.rmSync(path.join(ahead.gitDir, name), { force: true });
    try {
      fs.rmdirSync(ahead.gitDir);
    } catch {
      // git left something in it: the next capture's sweep removes it once this process is gone
    }
  }
  trace(`status ahead: discarded (${reason})`);
}

/**
 * The status started ahead's git directory, for the capture to use as its own when it has the
 * HEAD and store it would make one with (the capture then removes it). Null, and the status
 * discarded, otherwise.
 */
export function aheadGitDir(head: string, store: string): string | null {
  const ahead = slot()?.ahead;
  if (!ahead?.gitDir) return null;
  const { plan } = ahead;
  if (plan.head !== head || plan.store !== store) {
    discardStatusAhead(plan.head !== head ? "HEAD moved" : "another store");
    return null;
  }
  const dir = ahead.gitDir;
  ahead.gitDir = null;
  return dir;
}

/**
 * The status started ahead, when it is the one the capture would start now (`plan` as the
 * capture would write it); otherwise null, and it is killed.
 */
export function adoptStatusAhead(plan: StatusPlan): Promise<AheadResult> | null {
  const state = slot();
  const ahead = state?.ahead;
  if (!ahead) return null;
  if (JSON.stringify(ahead.plan) !== JSON.stringify(plan)) {
    discardStatusAhead("another status");
    return null;
  }
  // A restore since (a second one waits for the first), or a wait for the user (the picker):
  // files may have changed after it looked, and the capture must see the workspace as it is.
  if (fileMark(planFiles(plan).lastSafety) !== ahead.restoreMark) {
    discardStatusAhead("a restore ran meanwhile");
    return null;
  }
  if (performance.now() - ahead.startedAt > MAX_AGE_MS) {
    discardStatusAhead("started too long ago");
    return null;
  }
  state.ahead = null;
  trace("status ahead: adopted");
  return ahead.result;
}

/**
 * The capture's status: the one started ahead where it is `plan` exactly (see `adoptStatusAhead`)
 * and this one is not to write its index, else `run()`, started before this returns; a status
 * started ahead and not taken is killed. Once it answered, the plan is kept for the next command.
 */
export async function plannedStatus(
  plan: StatusPlan | null,
  writing: boolean,
  run: () => Promise<{ stdout: Buffer; stderr: string }>,
): Promise<{ stdout: Buffer; stderr: string }> {
  const ahead = plan && !writing ? adoptStatusAhead(plan) : null;
  if (!ahead) discardStatusAhead(writing ? "the index is due to be written" : "another status");
  const done = await (ahead ? ahead.then((early) => (early.code === 0 ? early : run())) : run());
  if (plan) saveStatusPlan(plan);
  return done;
}

/** The directory whose plan this command keeps (see Slot.from). */
export function statusAheadFrom(): string {
  try {
    return slot()?.from ?? process.cwd();
  } catch {
    return ""; // a deleted current directory: no plan is kept for it
  }
}

/** Keeps the plan for this directory current: written only when the status to start changed. */
export function saveStatusPlan(plan: StatusPlan): void {
  const state = slot();
  if (!state?.offered || plan.from !== state.from) return;
  if (state.plan && JSON.stringify(state.plan) === JSON.stringify(plan)) return;
  state.plan = plan;
  writePlan(plan);
}
