import { sha256Hex } from "../util/sha256.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { runGit, transferReason } from "../git/exec.js";
import type { WorkspaceLocation } from "../git/repository.js";

/**
 * Git transport for snapshot history: git's own push and fetch with explicit refspecs, so any
 * transport git speaks works (paths, file://, git://, ssh, https). Everything lives under
 * `refs/ghostcommit/` on the remote, which a plain clone or fetch never asks for.
 */

/** No hook, reflog, auto-gc or user default of the running git changes what a transfer does. */
const TRANSFER_CONFIG = [
  "-c",
  "core.hooksPath=/nonexistent/ghostcommit-no-hooks",
  "-c",
  "core.logAllRefUpdates=false",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "-c",
  "fetch.writeCommitGraph=false",
  "-c",
  // Every fetch keeps its pack as received, so the bytes received are the new packs' sizes.
  "fetch.unpackLimit=1",
  "-c",
  "transfer.unpackLimit=1",
  "-c",
  "push.recurseSubmodules=no",
  "-c",
  "push.gpgSign=false",
];

/** Transport settings of the user's repository config, e.g. the auth header a CI checkout sets there. */
const TRANSPORT_KEYS =
  /^(http\..+|https?\..+|credential\..+|url\..+\.(insteadof|pushinsteadof)|core\.sshcommand|core\.askpass)$/;

/**
 * What git needs to reach the remote as the user's own git would: their SSH and askpass
 * variables, and the transport settings of the repository's own config, handed over through the
 * environment (not the command line, where other users could read a token).
 */
async function transportEnv(location: WorkspaceLocation): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ["GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS"]) {
    if (process.env[key] !== undefined) env[key] = process.env[key];
  }
  if (location.kind !== "git") return env;
  const listed = await runGit(["config", "--local", "-z", "--list"], {
    cwd: location.root,
    okCodes: [0, 1, 128],
  });
  const pairs: [string, string][] = [];
  for (const entry of listed.stdout.toString("utf8").split("\0")) {
    const newline = entry.indexOf("\n");
    const key = newline === -1 ? entry : entry.slice(0, newline);
    if (TRANSPORT_KEYS.test(key.toLowerCase()))
      pairs.push([key, newline === -1 ? "true" : entry.slice(newline + 1)]);
  }
  env.GIT_CONFIG_COUNT = String(pairs.length);
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/**
 * Where a workspace's history goes on a remote: one namespace per workspace path in the
 * repository, and one for a plain directory, so that a plain folder pushed to a repository's
 * remote never lists its snapshots in the repository's history (nor the other way round).
 */
export function remoteNamespace(location: WorkspaceLocation): string {
  const scope =
    location.kind === "plain"
      ? "plain"
      : location.prefix === ""
        ? "root"
        : `dir-${sha256Hex(Buffer.from(location.prefix, "latin1")).slice(0, 16)}`;
  return `refs/ghostcommit/${scope}/`;
}

/** The remote as given, the URL git uses for it and the environment that reaches it. */
export interface ResolvedRemote {
  name: string;
  url: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A remote name of the user's repository (its push URL for pushing, fetch URL for fetching, with
 * `insteadOf` rewrites applied), or else a URL or a path (relative to `cwd`), unless
 * `configuredOnly`.
 */
export async function resolveRemote(
  location: WorkspaceLocation,
  given: string | undefined,
  direction: "push" | "fetch",
  cwd: string,
  options: { configuredOnly?: boolean } = {},
): Promise<ResolvedRemote> {
  const name = given ?? "origin";
  const env = await transportEnv(location);
  if (name.trim() === "" || name.startsWith("-")) {
    throw new GhostcommitError("usage", `not a remote: ${JSON.stringify(name)}`);
  }
  if (location.kind === "git" && /^[A-Za-z0-9._/-]+$/.test(name)) {
    const args = ["remote", "get-url", ...(direction === "push" ? ["--push"] : []), name];
    const result = await runGit(args, { cwd: location.root, okCodes: [0, 2, 128] });
    const url = result.stdout.toString("utf8").trim();
    // Git resolves a configured path from the work tree's top level, wherever in it git runs.
    const top = location.worktreeRoot ?? location.root;
    if (result.code === 0 && url) return { name, url: absoluteIfPath(url, top), env };
  }
  if (options.configuredOnly) {
    throw new GhostcommitError(
      "usage",
      location.kind === "git"
        ? `no remote named ${name} in the repository's configuration (only a configured remote can be named here)`
        : "this workspace is not in a git repository, so it has no configured remote to name",
      { remote: name },
    );
  }
  if (looksLikeUrl(name)) return { name, url: name, env };
  const local = path.resolve(cwd, name);
  if (await fs.stat(local).catch(() => null)) return { name, url: local, env };
  throw new GhostcommitError(
    "usage",
    given === undefined
      ? location.kind === "git"
        ? "no remote given and the repository has no remote named origin"
        : "no remote given: this workspace is not in a git repository, give a URL or a path"
      : `no remote ${name}: not a remote of the repository, a URL or an existing path`,
    { remote: name },
  );
}

function looksLikeUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) || (/^[^/:]+@?[^/:]*:/.test(text) && !text.startsWith("/"));
}

/** A remote URL that is a relative path means relative to the work tree's top level, not to our git dir. */
function absoluteIfPath(url: string, root: string): string {
  return looksLikeUrl(url) || path.isAbsolute(url) ? url : path.resolve(root, url);
}

/** Every ref of the remote (name to oid). */
export async function listRemoteRefs(gitDir: string, remote: ResolvedRemote): Promise<Map<string, string>> {
  const result = await runGit([...TRANSFER_CONFIG, "ls-remote", "--", remote.url], {
    cwd: path.dirname(gitDir),
    env: { GIT_DIR: gitDir, ...remote.env },
  }).catch((error: GhostcommitError) => {
    throw transferError("reach", remote.url, error);
  });
  const refs = new Map<string, string>();
  for (const line of result.stdout.toString("utf8").split("\n")) {
    const [oid, name] = line.split("\t");
    if (name && /^[0-9a-f]{40}$/.test(oid)) refs.set(name, oid);
  }
  return refs;
}

/**
 * Pushes `source:destination` pairs in one atomic transaction: the remote takes every ref or
 * none, so an interrupted or refused push leaves it as it was. Destinations must not exist yet
 * or be ancestors of the new value (never forced).
 */
export async function pushRefs(
  gitDir: string,
  remote: ResolvedRemote,
  updates: [string, string][],
): Promise<void> {
  if (updates.length === 0) return;
  const refspecs = updates.map(([source, destination]) => `${source}:${destination}`);
  // Status 1 is a refused ref: the reason is in the porcelain lines on stdout.
  const result = await atomicPush(gitDir, remote, refspecs).catch((error: GhostcommitError) => {
    throw transferError("push to", remote.url, error);
  });
  if (result.code !== 0) {
    const failure = new GhostcommitError("git-failed", "git push failed", {
      exitCode: result.code,
      stderr: result.stderr,
    });
    throw transferError("push to", remote.url, failure, result.stdout.toString("utf8"));
  }
}

/**
 * Deletes refs of the remote (a push's carrier), in one transaction. A failure is left for the
 * next push to mend: returns whether the refs are gone.
 */
export async function deleteRemoteRefs(
  gitDir: string,
  remote: ResolvedRemote,
  refs: string[],
): Promise<boolean> {
  if (refs.length === 0) return true;
  const result = await atomicPush(
    gitDir,
    remote,
    refs.map((r) => `:${r}`),
  ).catch(() => null);
  return result?.code === 0;
}

/** One `git push --atomic` of `refspecs`, hooks and signing off; status 1 (a refused ref) is an answer. */
function atomicPush(gitDir: string, remote: ResolvedRemote, refspecs: string[]) {
  return runGit(
    [
      ...TRANSFER_CONFIG,
      "push",
      "--atomic",
      "--porcelain",
      "--no-verify",
      "--no-signed",
      "--",
      remote.url,
      ...refspecs,
    ],
    { cwd: path.dirname(gitDir), env: { GIT_DIR: gitDir, ...remote.env }, okCodes: [0, 1] },
  );
}

/**
 * Fetches refspecs into `gitDir`, never pruning, never touching FETCH_HEAD, tags or submodules.
 * Returns the bytes received (the size of the packs the fetch added).
 */
export async function fetchRefs(gitDir: string, remote: ResolvedRemote, refspecs: string[]): Promise<number> {
  if (refspecs.length === 0) return 0;
  const packDir = path.join(gitDir, "objects", "pack");
  const before = new Set(await fs.readdir(packDir).catch(() => [] as string[]));
  await runGit(
    [
      ...TRANSFER_CONFIG,
      "fetch",
      "--no-prune",
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      "--quiet",
      "--",
      remote.url,
      ...refspecs,
    ],
    { cwd: path.dirname(gitDir), env: { GIT_DIR: gitDir, ...remote.env } },
  ).catch((error: GhostcommitError) => {
    throw transferError("fetch from", remote.url, error);
  });
  let bytes = 0;
  for (const name of await fs.readdir(packDir).catch(() => [] as string[])) {
    if (name.endsWith(".pack") && !before.has(name)) {
      bytes += (await fs.stat(path.join(packDir, name)).catch(() => null))?.size ?? 0;
    }
  }
  return bytes;
}

/** Which of `oids` the object store behind `env` holds. */
export async function presentObjects(
  cwd: string,
  env: NodeJS.ProcessEnv,
  oids: string[],
): Promise<Set<string>> {
  const present = new Set<string>();
  if (oids.length === 0) return present;
  const result = await runGit(["cat-file", "--buffer", "--batch-check=%(objectname) %(objecttype)"], {
    cwd,
    env,
    input: `${oids.join("\n")}\n`,
  });
  for (const line of result.stdout.toString("latin1").split("\n")) {
    const [oid, type] = line.split(" ");
    if (type && type !== "missing") present.add(oid);
  }
  return present;
}

/** Bytes (as stored) of the objects reachable from `tips` and not from `known`: what a push sends. */
export async function bytesToSend(
  cwd: string,
  env: NodeJS.ProcessEnv,
  tips: string[],
  known: string[],
): Promise<number> {
  if (tips.length === 0) return 0;
  const input = `${[...tips, ...known.map((oid) => `^${oid}`)].join("\n")}\n`;
  const result = await runGit(["rev-list", "--objects", "--disk-usage", "--stdin"], { cwd, env, input });
  return Number(result.stdout.toString("latin1").trim()) || 0;
}

function transferError(verb: string, url: string, error: GhostcommitError, stdout = ""): GhostcommitError {
  const stderr = GhostcommitError.is(error, "git-failed")
    ? (error.data.stderr ?? error.message)
    : error.message;
  const reason = transferReason(stderr, stdout) || error.message;
  return new GhostcommitError("git-failed", `cannot ${verb} ${url}: ${reason}`, { url, stderr }, error);
}
