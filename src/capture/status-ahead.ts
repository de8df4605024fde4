import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { dataHome } from "../config.js";
import { baseGitEnv } from "../git/git-env.js";
import { childProcess } from "../util/child-process.js";
import { ownedPrivately } from "../util/private-file.js";
import { trace } from "../util/trace.js";

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

/** Any non-empty value turns starting status ahead off. */
export const STATUS_AHEAD_OFF = "GHOSTCOMMIT_NO_STATUS_AHEAD";

export interface StatusPlan {
  /** The directory the command ran in: the plan file is named after it. */
  from: string;
  /** Where status runs (the work tree's root), with what and under which extra environment. */
  cwd: string;
  args: string[];
  env: Record<string, string>;
  /** The throw-away git directory's HEAD line, and where it is made and what it shares. */
  head: string;
  tmpDir: string;
  commonDir: string;
  /** The private index copy's stamp (see `persistDue`). */
  stampFile: string;
}

interface Ahead {
  plan: StatusPlan;
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
  plan: StatusPlan | null;
  ahead: Ahead | null;
}
const SLOT = Symbol.for("ghostcommit.statusAhead");
const slot = (): Slot | undefined => (globalThis as { [SLOT]?: Slot })[SLOT];

/**
 * Status rewrites the whole private index copy (~60 ms for 100k files) whenever a cached directory
 * changed (a file created, deleted or renamed into it, as every restore does) or, with Watchman, to
 * record its new token. Rewriting it each time costs more than it saves: a status reads again only
 * the directories changed since the last write (a file whose stat changed but not its content is
 * hashed again), and Watchman answers from an older token with every file changed since. So
 * the copy is written by the first status after it was made (with Watchman the first two after
 * the watch began: git's first token is its own, the second Watchman's), then at most this often.
 */
const PERSIST_INTERVAL_MS = 60_000;
const WATCHMAN_TOKEN_WRITES = 2;

export interface IndexStamp {
  source: string | null;
  /** The core.ignoreCase its untracked cache was made under (absent: false). */
  ignoreCase?: boolean;
  /** Statuses that wrote the copy since it was made (or, with Watchman, the watch began). */
  writes?: number;
  writtenAt?: number;
}

/** Whether the next status should write its caches into the private copy. */
export function persistDue(stamp: IndexStamp | null, watchman: boolean, watchStarted: boolean): boolean {
  const writes = Number.isInteger(stamp?.writes) ? stamp!.writes! : 0;
  const writtenAt = typeof stamp?.writtenAt === "number" ? stamp.writtenAt : 0;
  return (
    watchStarted ||
    writes < (watchman ? WATCHMAN_TOKEN_WRITES : 1) ||
    Date.now() - writtenAt >= PERSIST_INTERVAL_MS
  );
}

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

/**
 * Run by the loader for a command that captures: starts the planned status, if there is a plan
 * for this directory and the private copy is not due to be written. Never throws.
 */
export function startStatusAhead(): void {
  const state: Slot = { offered: !process.env[STATUS_AHEAD_OFF], plan: null, ahead: null };
  (globalThis as { [SLOT]?: Slot })[SLOT] = state;
  if (!state.offered) return;
  try {
    const plan = readPlan(planFile(process.cwd()));
    if (!plan || plan.from !== process.cwd()) return;
    state.plan = plan;
    if (persistDue(readStamp(plan.stampFile), false, false)) return;
    const suffix = `${process.hrtime.bigint().toString(16).slice(-8)}a`;
    // Not `recursive`: a store removed since the plan was written is not made again.
    const gitDir = makeGitDir(plan.tmpDir, plan.commonDir, plan.head, suffix, false);
    const child = childProcess().spawn("git", plan.args, {
      cwd: plan.cwd,
      env: { ...baseGitEnv(), ...plan.env, GIT_DIR: gitDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    state.ahead = { plan, gitDir, child, result: collect(child) };
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
export function aheadGitDir(head: string, tmpDir: string, commonDir: string): string | null {
  const ahead = slot()?.ahead;
  if (!ahead?.gitDir) return null;
  const { plan } = ahead;
  if (plan.head !== head || plan.tmpDir !== tmpDir || plan.commonDir !== commonDir) {
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
  state.ahead = null;
  trace("status ahead: adopted");
  return ahead.result;
}

/** Keeps the plan for this directory current: written only when the status to start changed. */
export function saveStatusPlan(plan: StatusPlan): void {
  const state = slot();
  if (!state?.offered || plan.from !== process.cwd()) return;
  if (state.plan && JSON.stringify(state.plan) === JSON.stringify(plan)) return;
  state.plan = plan;
  const file = planFile(plan.from);
  const temp = `${file}.${process.pid}.tmp`;
  try {
    const dir = path.dirname(file);
    // Beside the code cache; like it, never the data home itself: a command that stored nothing
    // leaves nothing behind.
    if (fs.existsSync(path.dirname(dir))) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!trustedDir(dir)) return;
    fs.writeFileSync(temp, JSON.stringify(plan), { mode: 0o600, flag: "wx" });
    fs.renameSync(temp, file);
  } catch {
    fs.rmSync(temp, { force: true });
  }
}

/** The plan's file: in the code cache's directory, named after the directory a command runs in. */
function planFile(from: string): string {
  return path.join(dataHome(), "cache", `status-${fnv(from, 0x811c9dc5)}${fnv(from, 0x050c5d1f)}.json`);
}

function fnv(text: string, seed: number): string {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

function trustedDir(dir: string): boolean {
  const stat = fs.lstatSync(dir);
  return stat.isDirectory() && ownedPrivately(stat);
}

function readPlan(file: string): StatusPlan | null {
  if (!process.getuid || !trustedDir(path.dirname(file))) return null;
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || !ownedPrivately(stat)) return null;
    const plan = JSON.parse(fs.readFileSync(fd, "utf8")) as StatusPlan;
    const strings = (values: unknown[]) => values.every((value) => typeof value === "string");
    const shaped =
      strings([plan.from, plan.cwd, plan.head, plan.tmpDir, plan.commonDir, plan.stampFile]) &&
      Array.isArray(plan.args) &&
      strings(plan.args) &&
      typeof plan.env === "object" &&
      plan.env !== null &&
      strings(Object.values(plan.env));
    return shaped ? plan : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function readStamp(file: string): IndexStamp | null {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as IndexStamp;
  } catch {
    return null;
  }
}
