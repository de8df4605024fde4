import { sha256Hex } from "../util/sha256.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { runGit, transferReason } from "../git/exec.js";
import type { WorkspaceLocation } from "../git/repository.js";
import type { ResolvedRemote } from "./remote-resolve.js";

export { type ResolvedRemote, resolveRemote } from "./remote-resolve.js";

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

/** Every ref of the remote (name to oid). */
export async function listRemoteRefs(gitDir: string, remote: ResolvedRemote): Promise<Map<string, string>> {
  const result = await runGit([...TRANSFER_CONFIG, "ls-remote", ...uploadPack(remote), "--", remote.url], {
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
 * next push to mend: returns null once the refs are gone, else why they are not (the remote
 * refused the deletion, or could not be reached for it).
 */
export async function deleteRemoteRefs(
  gitDir: string,
  remote: ResolvedRemote,
  refs: string[],
): Promise<string | null> {
  if (refs.length === 0) return null;
  const deletion = refs.map((r) => `:${r}`);
  const result = await atomicPush(gitDir, remote, deletion).catch((error: GhostcommitError) => error);
  if (result instanceof Error) return transferReason(stderrOf(result), "") || result.message;
  if (result.code === 0) return null;
  return transferReason(result.stderr, result.stdout.toString("utf8")) || `git push exited ${result.code}`;
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
      ...(remote.receivePack === undefined ? [] : [`--receive-pack=${remote.receivePack}`]),
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
      ...uploadPack(remote),
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

/** The remote's own upload-pack, for a command that reads from it. */
function uploadPack(remote: ResolvedRemote): string[] {
  return remote.uploadPack === undefined ? [] : [`--upload-pack=${remote.uploadPack}`];
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
  const stderr = stderrOf(error);
  const reason = transferReason(stderr, stdout) || error.message;
  // git's own line, not the remote's (`remote: …`): an object this side's refs name is gone.
  if (/^(fatal|error): bad object [0-9a-f]{40}/m.test(stderr)) {
    return new GhostcommitError(
      "store-damaged",
      `cannot ${verb} ${url}: ${reason}, which this store's refs name: \`ghostcommit doctor\` names what is damaged, and \`doctor --repair\` mends it`,
      { url },
      error,
    );
  }
  return new GhostcommitError("git-failed", `cannot ${verb} ${url}: ${reason}`, { url, stderr }, error);
}

function stderrOf(error: GhostcommitError): string {
  return GhostcommitError.is(error, "git-failed") ? (error.data.stderr ?? error.message) : error.message;
}
