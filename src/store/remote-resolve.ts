import { promises as fs } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { runGit } from "../git/exec.js";
import { configEnv } from "../git/git-env.js";
import type { WorkspaceLocation } from "../git/repository.js";

/** Which remote a push or fetch names, and how git reaches it as the user's own git would. */

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
  return Object.assign(env, configEnv(pairs));
}

/** The remote as given, the URL git uses for it and the environment that reaches it. */
export interface ResolvedRemote {
  name: string;
  url: string;
  env: NodeJS.ProcessEnv;
  /** A configured remote's `uploadpack` and `receivepack`: the programs git runs on its side. */
  uploadPack?: string;
  receivePack?: string;
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
    if (result.code === 0 && url)
      return { name, url: absoluteIfPath(url, top), env, ...(await remotePrograms(location.root, name)) };
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

/**
 * The remote's `uploadpack` and `receivepack` settings: git runs them on the remote's side (a
 * git outside the remote's PATH, a wrapper), and is told them here, as it is given the URL and
 * not the remote's name (whose other settings, such as `mirror` or `fetch`, must not apply).
 */
async function remotePrograms(
  root: string,
  name: string,
): Promise<Pick<ResolvedRemote, "uploadPack" | "receivePack">> {
  const key = `^remote\\.${name.replace(/\./g, "\\.")}\\.(uploadpack|receivepack)$`;
  const result = await runGit(["config", "-z", "--get-regexp", key], { cwd: root, okCodes: [0, 1] });
  const programs: Pick<ResolvedRemote, "uploadPack" | "receivePack"> = {};
  for (const entry of result.stdout.toString("utf8").split("\0")) {
    const newline = entry.indexOf("\n");
    if (newline === -1) continue; // a key with no value is no program
    const value = entry.slice(newline + 1);
    // The last one set wins, as git reads it.
    if (entry.slice(0, newline).endsWith(".uploadpack")) programs.uploadPack = value;
    else programs.receivePack = value;
  }
  return programs;
}
