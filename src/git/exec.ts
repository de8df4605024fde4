import type { ChildProcess } from "node:child_process";
import { childProcess } from "../util/child-process.js";
import path from "node:path";
import { GhostcommitError, fsError } from "../errors.js";
import { WaitingChild } from "../util/detached.js";
import { trace, tracing } from "../util/trace.js";

/**
 * The only place that starts git. Every call gets an argv array (no shell), a forced locale,
 * literal pathspecs and no pager, and declares which exit codes count as success: failure is
 * never inferred from stderr.
 */

/** Environment variables that would make git act on another repository or run user programs. */
const DROPPED_ENV =
  /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|PREFIX|NAMESPACE|CONFIG|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|EXTERNAL_DIFF|DIFF_OPTS|EDITOR|SEQUENCE_EDITOR|PAGER|SSH|SSH_COMMAND|ASKPASS|QUARANTINE_PATH|REPLACE_REF_BASE|GRAFT_FILE|SHALLOW_FILE|NO_REPLACE_OBJECTS|ICASE_PATHSPECS|GLOB_PATHSPECS|NOGLOB_PATHSPECS|LITERAL_PATHSPECS|DEFAULT_HASH|AUTHOR_\w+|COMMITTER_\w+|REFLOG_ACTION|INTERNAL_\w+|ATTR_\w+)$/;

/** Whether an environment variable of the user's reaches the git processes ghostcommit runs. */
export function gitSeesEnv(name: string): boolean {
  return !DROPPED_ENV.test(name);
}

let baseEnvCache: NodeJS.ProcessEnv | undefined;

/**
 * For a git process that writes thousands of loose objects (a plain directory's first
 * `update-index --add`, its `write-tree`): glibc hands each object's compression buffers back to
 * the system on free and takes them again for the next, and every page taken again faults anew.
 * Measured on 49,000 files: `update-index` 42 → 18 s, `write-tree` 1.5 → 0.6 s. Ignored where the
 * C library is not glibc. Not for status and the like, which it only made fault more.
 */
export const MANY_OBJECTS_ENV = {
  MALLOC_TRIM_THRESHOLD_: String(128 * 1024 * 1024),
  MALLOC_TOP_PAD_: String(16 * 1024 * 1024),
};

/** The environment every git process starts from: the user's, minus anything that redirects git. */
export function baseGitEnv(): NodeJS.ProcessEnv {
  if (baseEnvCache) return baseEnvCache;
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!DROPPED_ENV.test(key)) env[key] = value;
  }
  Object.assign(env, {
    LC_ALL: "C",
    LANGUAGE: "C",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    GIT_LITERAL_PATHSPECS: "1",
    GIT_ADVICE: "0",
    GIT_AUTHOR_NAME: "ghostcommit",
    GIT_AUTHOR_EMAIL: "ghostcommit@localhost",
    GIT_COMMITTER_NAME: "ghostcommit",
    GIT_COMMITTER_EMAIL: "ghostcommit@localhost",
  });
  baseEnvCache = env;
  return env;
}

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
    child.on("error", (error) => reject(gitFailure(args, -1, String(error.message), error)));
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

function gitFailure(
  args: string[],
  code: number,
  stderr: string,
  cause?: unknown,
  cwd?: string,
): GhostcommitError {
  const reason = gitReason(stderr);
  // A full disk here is the user's to fix, not git's failure: said as every other full-disk error
  // is (a remote's full disk, in its `remote:` lines, is the transfer's error).
  const local = stderr.split("\n").filter((line) => !line.startsWith("remote:"));
  if (local.some((line) => /No space left on device|Out of diskspace/i.test(line))) {
    return new GhostcommitError(
      "io",
      `cannot write to ${cwd ?? "the store"} (git ${subcommand(args)}): no space left on the device (ENOSPC)`,
      { ...(cwd ? { path: cwd } : {}), errno: "ENOSPC" },
      cause,
    );
  }
  return new GhostcommitError(
    "git-failed",
    `git ${args
      .filter((a, i) => a !== "-c" && args[i - 1] !== "-c")
      .slice(0, 3)
      .join(" ")} failed (exit ${code})${reason ? `: ${reason}` : ""}`,
    { exitCode: code, stderr: stderr.slice(0, 4000) },
    cause,
  );
}

/** The git command run (`repack`), past `-c key=value` and other global options. */
function subcommand(args: string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-c" || args[i] === "-C") i++;
    else if (!args[i].startsWith("-")) return args[i];
  }
  return "";
}

/** The system's messages (strerror) git quotes for a write a person can fix, by code. */
const STRERROR: [string, string][] = [
  ["Permission denied", "EACCES"],
  ["No space left on device", "ENOSPC"],
  ["Read-only file system", "EROFS"],
  ["Disk quota exceeded", "EDQUOT"],
  ["Operation not permitted", "EPERM"],
];
const WRITING = /unable to create|unable to write|could not write|cannot lock|failed to write|for writing/i;

/**
 * A write git could not make in a local file (a ref's lock, an object, an index): reported as
 * ghostcommit's own writes are, `cannot write <path>: permission denied (EACCES)`, instead of
 * git's command line; null for any other failure. A remote's own lines (`remote: …`) are its
 * side's, told by the transfer's error.
 */
function localWriteFailure(stderr: string, options: GitRunOptions, cause: GhostcommitError): unknown {
  for (const line of stderr.split("\n")) {
    const said = /^(?:fatal|error): (.*)$/.exec(line.trim())?.[1];
    if (!said || said.startsWith("remote ")) continue;
    const database = /^insufficient permission for adding an object to repository database (.+)$/.exec(said);
    const errno = database ? "EACCES" : STRERROR.find(([text]) => said.includes(text))?.[1];
    if (!errno || !(database || WRITING.test(said))) continue;
    // The file it names (a lock's target), else the directory git was writing in.
    const named = database?.[1] ?? [...said.matchAll(/'([^']+)'/g)].at(-1)?.[1]?.replace(/\.lock$/, "");
    const where = path.resolve(options.cwd, named ?? options.env?.GIT_DIR ?? ".");
    return fsError(Object.assign(new Error(cause.message, { cause }), { code: errno }), "write", where);
  }
  return null;
}

/**
 * What went wrong, from git's stderr: its first `fatal:` or `error:` line (the cause; what follows
 * is consequence or advice, as in "Please make sure you have the correct access rights / and the
 * repository exists."), without the prefix; else its last line that is not a hint.
 */
export function gitReason(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("hint:"));
  const cause = lines.find((line) => /^(fatal|error): /.test(line));
  return cause ? cause.replace(/^(fatal|error): /, "") : (lines.at(-1) ?? "");
}

/**
 * Why a transfer failed, from git's stderr: what the remote refused a ref for ("pre-receive hook
 * declined"), else what the transport said before git's own conclusion ("ssh: Could not resolve
 * hostname …" before "fatal: Could not read from remote repository."), else git's cause; with what
 * the remote itself printed (`remote:` lines, such as a server hook's reason).
 */
export function transferReason(stderr: string, stdout: string): string {
  const linesOf = (text: string) =>
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
  const lines = linesOf(stderr);
  const said = lines.filter((l) => l.startsWith("remote:")).map((l) => l.slice("remote:".length).trim());
  const refused = [...linesOf(stdout), ...lines].flatMap(
    (l) => /^!.*\[(?:remote )?rejected\].*\(([^)]+)\)$/.exec(l)?.[1] ?? [],
  );
  const firstFailure = lines.findIndex((line) => /^(fatal|error): /.test(line));
  const transport = lines
    .slice(0, Math.max(firstFailure, 0))
    .filter((line) => !/^(remote:|To |!|hint:)/.test(line));
  // Every ref says only "unpacker error"; git's own line before it says why (a read-only remote).
  const unpack = lines.find((l) => l.startsWith("error: remote unpack failed: "))?.slice("error: ".length);
  const cause = unpack
    ? unpack
    : refused.length > 0
      ? `refused: ${[...new Set(refused)].join("; ")}`
      : transport.length > 0
        ? transport.join("; ")
        : gitReason(stderr);
  // git's own lines on the remote side ("error: hook declined to update …") repeat the refusal.
  const remote = said.filter((line) => line !== "" && !/^(error|fatal): /.test(line));
  return remote.length > 0 ? `${cause} (the remote said: ${remote.join(" ")})` : cause;
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
