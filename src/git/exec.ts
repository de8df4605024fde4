import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { GhostcommitError } from "../errors.js";
import { childProcess } from "../util/child-process.js";
import { WaitingChild } from "../util/detached.js";
import { trace, tracing } from "../util/trace.js";
import { gitFailure, localWriteFailure } from "./failure.js";
import { baseGitEnv } from "./git-env.js";

export { gitReason, transferReason } from "./failure.js";

/**
 * The only place that starts git. Every call gets an argv array (no shell), a forced locale,
 * literal pathspecs and no pager, and declares which exit codes count as success: failure is
 * never inferred from stderr.
 */

export { baseGitEnv, gitSeesEnv, MANY_OBJECTS_ENV } from "./git-env.js";

/**
 * For a git command that reads the user's index without needing it fresh (`--indexed-objects`):
 * the user's `core.fsmonitor` hook is not run (a slow one held doctor and gc for minutes).
 */
export const NO_FSMONITOR = ["-c", "core.fsmonitor=false"];

export interface GitRunOptions {
  cwd: string;
  /** Added on top of the base environment. */
  env?: NodeJS.ProcessEnv;
  /**
   * What git reads on stdin: all of it, or chunks made one at a time (each may reuse the last
   * one's memory: the next is asked for once git has taken it).
   */
  input?: Buffer | string | (() => Buffer | null);
  /** Exit codes that mean success; default [0]. */
  okCodes?: number[];
  /** Takes stdout as it arrives (then `stdout` in the result is empty): big outputs are read while git still writes. */
  onStdout?: (chunk: Buffer) => void;
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** Runs one git command to completion and returns its raw output. */
export function runGit(args: string[], options: GitRunOptions): Promise<GitResult> {
  const started = tracing ? performance.now() : 0;
  const child = spawnGit(args, options);
  const result = collect(child, args, options, started);
  const input = options.input;
  if (typeof input === "function") {
    const next = () => {
      const chunk = child.stdin?.destroyed ? null : input();
      if (chunk === null) child.stdin?.end();
      else child.stdin?.write(chunk, (error) => (error ? child.stdin?.destroy() : next()));
    };
    next();
  } else if (input !== undefined) child.stdin?.end(input);
  else child.stdin?.end();
  return result;
}

function spawnGit(args: string[], options: GitRunOptions): ChildProcess {
  return childProcess().spawn("git", args, {
    cwd: options.cwd,
    env: { ...baseGitEnv(), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/**
 * A git command that reads what to do on stdin (`diff-tree --stdin`), started ahead: in a
 * short-lived command, once its status runs (see `whenGitRuns`), where the spawn (a fork of a
 * process of Node's size, ~10 ms of this thread) and git's start cost nothing, as the command
 * waits on status anyway. It waits for `run`'s input; should this process end first, it reads
 * the end of its input and exits. Where it was not started, or is gone, `run` is `runGit`.
 */
export class GitAhead {
  private readonly git: WaitingChild<Promise<GitResult>>;

  constructor(
    private readonly args: string[],
    private readonly options: GitRunOptions,
  ) {
    this.git = new WaitingChild(() => {
      const child = spawnGit(args, options);
      const result = collect(child, args, options, 0);
      result.catch(() => {}); // awaited by `run`, if ever
      return { child, with: result };
    });
  }

  /** Gives the command its input and returns its output, as `runGit` would. */
  async run(input: string): Promise<GitResult> {
    const waiting = this.git.take();
    if (!waiting?.child.stdin) return runGit(this.args, { ...this.options, input });
    const started = tracing ? performance.now() : 0;
    waiting.child.stdin.end(input);
    const result = await waiting.with;
    if (tracing)
      trace(
        `git ${this.args.slice(0, 4).join(" ")} (started ahead): ${(performance.now() - started).toFixed(1)} ms`,
      );
    return result;
  }
}

/** The output of a started git process once it ends; rejected for an exit code not in `okCodes`. */
function collect(
  child: ChildProcess,
  args: string[],
  options: GitRunOptions,
  started: number,
): Promise<GitResult> {
  const okCodes = options.okCodes ?? [0];
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", options.onStdout ?? ((chunk: Buffer) => out.push(chunk)));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) => reject(spawnFailure(args, error, options.cwd)));
    child.stdin?.on("error", () => {
      // git may exit before reading all input; its exit code tells what happened.
    });
    child.on("close", (code, signal) => {
      if (tracing && started > 0)
        trace(
          `git ${args
            .filter((a, i) => !a.includes("=") && a !== "-c" && args[i - 1] !== "-c")
            .slice(0, 4)
            .join(" ")}: ${(performance.now() - started).toFixed(1)} ms`,
        );
      const stderr = Buffer.concat(err).toString("utf8");
      const status = code ?? (signal ? 128 : 1);
      if (!okCodes.includes(status)) {
        const failure = gitFailure(args, status, stderr, undefined, options.cwd);
        reject(localWriteFailure(stderr, options, failure) ?? failure);
        return;
      }
      resolve({ stdout: Buffer.concat(out), stderr, code: status });
    });
  });
}

/** Splits NUL-terminated output into strings, keeping bytes that are not UTF-8 as latin1 round-trips. */
export function splitNul(buffer: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = buffer.indexOf(0, start); i !== -1; i = buffer.indexOf(0, start)) {
    parts.push(buffer.subarray(start, i));
    start = i + 1;
  }
  if (start < buffer.length) parts.push(buffer.subarray(start));
  return parts;
}

/**
 * git could not start. Node says `spawn git ENOENT` both when git is missing and when the
 * directory it was to run in is gone (a workspace deleted or moved while a library user or a
 * server holds it open): the second is said as such.
 */
function spawnFailure(
  args: string[],
  error: NodeJS.ErrnoException,
  cwd: string | undefined,
): GhostcommitError {
  if (error.code === "ENOENT" && cwd !== undefined && !existsSync(cwd)) {
    return new GhostcommitError(
      "not-a-workspace",
      `${cwd} no longer exists (deleted or moved?): nothing was done there`,
      { path: cwd },
      error,
    );
  }
  return gitFailure(args, -1, String(error.message), error);
}
