import path from "node:path";
import { fsError, GhostcommitError } from "../errors.js";

/** What a failed git command means for a person: its own words, or a local write a person can fix. */

export function gitFailure(
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
  const config = gitConfigProblem(stderr, cwd);
  if (config) return badGitConfig(config, cause);
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
export function localWriteFailure(
  stderr: string,
  options: { cwd: string; env?: NodeJS.ProcessEnv },
  cause: GhostcommitError,
): unknown {
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
  const at = lines.findIndex((line) => /^(fatal|error): /.test(line));
  if (at === -1) return lines.at(-1) ?? "";
  const cause = lines[at].replace(/^(fatal|error): /, "");
  // A cause ending in a colon lists what it names on the lines after it ("unknown repository
  // extension found:", then each extension).
  const listed = cause.endsWith(":")
    ? lines.slice(at + 1).filter((line) => !/^(fatal|error|warning): /.test(line))
    : [];
  return listed.length > 0 ? `${cause} ${listed.join(", ")}` : cause;
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
  // git's own lines on the remote side ("error: hook declined to update …") repeat the refusal,
  // but one quoting the system's error says why the unpacker failed (its disk is full), and its
  // fsck's finding (receive.fsckObjects) names the object and what is wrong with it.
  const remote = said.filter(
    (line) =>
      line !== "" &&
      (!/^(error|fatal): /.test(line) ||
        STRERROR.some(([text]) => line.includes(text)) ||
        /^error: object [0-9a-f]{7,}: \w+: /.test(line)),
  );
  return remote.length > 0 ? `${cause} (the remote said: ${remote.join(" ")})` : cause;
}

/** Git's words when it cannot read its configuration (what `gitConfigProblem` looks for). */
const CONFIG_FAILURE =
  /^(bad config (line|variable|file)|bad (boolean|numeric) config value|failed to expand user dir in|bad zlib compression level|could not expand include path|relative config includes? must|exceeded maximum include depth)/;

/**
 * A configuration git cannot read: a bad line or value in the user's, the system's or the
 * repository's config file (`core.autocrlf = maybe`), or a path in it git cannot expand. Every git
 * command fails alike there (`git status` too), so it is the user's to fix, not a damaged store.
 * Git's words, with the file when it names one; null for any other failure. A remote's own lines
 * (`remote: …`) are its side's.
 */
export function gitConfigProblem(stderr: string, cwd?: string): { reason: string; file?: string } | null {
  for (const line of stderr.split("\n")) {
    const said = /^(?:fatal|error): (.*)$/.exec(line.trim())?.[1];
    if (!said || !CONFIG_FAILURE.test(said)) continue;
    const named = / in file '?(.+?)'?(?: at line \d+)?(?:: .*)?$/.exec(said)?.[1];
    if (!named) return { reason: said };
    // git names the repository's own file from where it ran (".git/config").
    const file = cwd ? path.resolve(cwd, named) : named;
    return {
      reason: said
        .replace(` in file ${named}`, ` in file ${file}`)
        .replace(` in file '${named}'`, ` in file '${file}'`),
      file,
    };
  }
  return null;
}

/** The error for a configuration git cannot read (see `gitConfigProblem`). */
export function badGitConfig(config: { reason: string; file?: string }, cause?: unknown): GhostcommitError {
  return new GhostcommitError(
    "bad-config",
    `git cannot read its configuration: ${config.reason}; every git command here fails the same way (git status too) until that is fixed`,
    config.file ? { file: config.file } : {},
    cause,
  );
}
