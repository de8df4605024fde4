import { sha256Hex } from "../util/sha256.js";
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { gitSeesEnv, runGit } from "./exec.js";
import { climbsOut, type RelPath, relFromText } from "../paths.js";
import { refuseUnsupportedFormat } from "./repository-format.js";
import { refuseGitDirectory, validHead } from "./git-directory.js";

/** Where a workspace is and what kind it is. Resolved once per process. */
export interface WorkspaceLocation {
  /** Real path of the workspace directory. */
  root: string;
  kind: "git" | "plain";
  /** Git workspaces: the work tree root (real path). */
  worktreeRoot?: string;
  /** Git workspaces: the workspace's path below the work tree root ("" at the root), '/'-separated, no trailing '/'. */
  prefix: RelPath;
  /** Git workspaces: the (per-worktree) git directory. */
  gitDir?: string;
  /** Git workspaces: the common git directory (objects, refs, config). */
  commonDir?: string;
  /** Stable identity: the workspace's real path and its worktree. */
  key: string;
}

/**
 * Added where a workspace has none of `what` (snapshots, sessions): a subdirectory of a repository
 * is a workspace of its own, and the repository's are one `-C` away. Empty at a repository's root
 * and in a plain directory.
 */
export function keptElsewhere(
  root: string,
  repositoryRoot: string | undefined,
  what: string,
  reach: (dir: string) => string = (dir) => `-C ${dir}`,
): string {
  return repositoryRoot && repositoryRoot !== root
    ? ` (a subdirectory keeps its own ${what}: the repository's are reached with ${reach(repositoryRoot)})`
    : "";
}

/**
 * Finds the repository (if any) around `cwd`. `viaGit`: always ask git, never read the files
 * (to check the two agree).
 */
export async function locateWorkspace(cwd: string, viaGit = false): Promise<WorkspaceLocation> {
  let root: string;
  try {
    root = realpathSync(cwd);
    if (!statSync(root).isDirectory()) throw new Error("not a directory");
  } catch (error) {
    throw new GhostcommitError("not-a-workspace", `not a directory: ${cwd}`, { path: cwd }, error);
  }
  const found = viaGit ? undefined : discoverFromFiles(root);
  if (found === "plain") return plainLocation(root);
  if (found) {
    const { worktreeRoot, gitDir } = found;
    refuseUnsupportedFormat(root, gitDir);
    const prefix = relFromText(path.relative(worktreeRoot, root).split(path.sep).join("/"));
    return { root, kind: "git", worktreeRoot, prefix, gitDir, commonDir: gitDir, key: keyOf(root, gitDir) };
  }
  let lines: string[];
  try {
    const result = await runGit(
      [
        "rev-parse",
        "--is-inside-git-dir",
        "--show-toplevel",
        "--absolute-git-dir",
        "--git-common-dir",
        "--show-prefix",
      ],
      { cwd: root },
    );
    lines = result.stdout.toString("utf8").split("\n");
  } catch (error) {
    // git answers "must be run in a work tree" there: taken for a plain directory, a restore
    // would delete the repository's refs and objects as files no snapshot holds.
    refuseGitDirectory(root);
    if (findGitAbove(root)) {
      const stderr = GhostcommitError.is(error, "git-failed") ? (error.data.stderr ?? "") : "";
      // Git refuses a repository another user owns (CVE-2022-24765); its own advice is a
      // command that trusts it for every program, which is the user's call to make.
      const owned = /dubious ownership in repository at '(.*)'/.exec(stderr);
      const refused = owned
        ? `; another user owns it, and git reads it only once you trust it (git config --global --add safe.directory '${owned[1]}')`
        : "";
      throw new GhostcommitError(
        "not-a-workspace",
        `git cannot read the repository around ${root}: ${(error as GhostcommitError).message}${refused}`,
        { path: root },
        error,
      );
    }
    return plainLocation(root);
  }
  if (lines[0] === "true") {
    throw new GhostcommitError("not-a-workspace", `${root} is inside a .git directory`, { path: root });
  }
  const worktreeRoot = lines[1];
  if (!worktreeRoot) {
    throw new GhostcommitError("not-a-workspace", `${root} is in a bare repository`, { path: root });
  }
  const gitDir = lines[2];
  if (isOutside(worktreeRoot, root)) {
    // core.worktree names a work tree elsewhere: the files here are none of the repository's.
    throw new GhostcommitError(
      "not-a-workspace",
      `${root} is outside the work tree of the repository at ${gitDir} (core.worktree: ${worktreeRoot}), so a snapshot here would hold none of its files; ghostcommit does not serve a work tree set apart from its .git as a repository: run it in ${worktreeRoot}, where it snapshots the files as a plain directory's`,
      { path: root },
    );
  }
  const commonDir = path.resolve(root, lines[3]);
  refuseUnsupportedFormat(root, commonDir);
  const prefix = relFromText(lines[4].replace(/\/$/, ""));
  return { root, kind: "git", worktreeRoot, prefix, gitDir, commonDir, key: keyOf(root, gitDir) };
}

/** Variables git sees that leave its discovery and its view of the repository as the files say. */
const NEUTRAL_GIT_VARS =
  /^GIT_(AUTHOR_|COMMITTER_|CONFIG_GLOBAL$|CONFIG_NOSYSTEM$|TERMINAL_PROMPT$|TRACE|EDITOR$|SEQUENCE_EDITOR$|PAGER$|ASKPASS$|SSH|SSL_|HTTP_|EXEC_PATH$|OPTIONAL_LOCKS$|FLUSH$|MERGE_VERBOSITY$|PROTOCOL_FROM_USER$|ALLOW_PROTOCOL$)/;
const UNUSUAL_CONFIG =
  /worktree|include|bare\s*=(?![ \t]*false\b)|repositoryformatversion\s*=(?![ \t]*[01]\b)/i;

/**
 * Git's discovery read from the files, for the usual case only, saving a git process per command:
 * walking up from `root`, the first `.git` is a real directory that looks like a repository,
 * owned (with its work tree) by this user, on the same file system, and its config moves nothing
 * (no `core.worktree`, `core.bare`, includes or newer format). Anything else (a gitfile, a
 * worktree, a bare repository, a `GIT_DIR` or `git -c` in the environment, another owner) is
 * left to `git rev-parse`: undefined. "plain" where nothing up to `/` could be a repository, on
 * one file system (git stops at a file system's edge, and what lies beyond is left to it).
 */
function discoverFromFiles(root: string): { worktreeRoot: string; gitDir: string } | "plain" | undefined {
  if (!process.getuid || path.sep !== "/") return undefined;
  for (const name of Object.keys(process.env)) {
    // Those ghostcommit keeps from git (GIT_DIR and the like) do not count.
    if (name.startsWith("GIT_") && gitSeesEnv(name) && !NEUTRAL_GIT_VARS.test(name)) return undefined;
  }
  const uid = process.getuid();
  const lstat = (p: string) => lstatSync(p, { throwIfNoEntry: false });
  const rootStat = lstat(root);
  if (!rootStat) return undefined;
  for (let dir = root; ; ) {
    const dotGit = path.join(dir, ".git");
    const stat = lstat(dotGit);
    if (stat) {
      if (!stat.isDirectory() || stat.uid !== uid || lstat(dir)?.uid !== uid) return undefined;
      if (!validHead(path.join(dotGit, "HEAD")) || !lstat(path.join(dotGit, "objects"))?.isDirectory())
        return undefined;
      if (!lstat(path.join(dotGit, "refs"))?.isDirectory() || lstat(path.join(dotGit, "commondir")))
        return undefined;
      let config: string;
      try {
        config = readFileSync(path.join(dotGit, "config"), "utf8");
      } catch {
        return undefined;
      }
      if (UNUSUAL_CONFIG.test(config)) return undefined;
      return { worktreeRoot: dir, gitDir: dotGit };
    }
    // A directory that is itself a git directory: a bare repository, or inside a `.git`.
    if (lstat(path.join(dir, "HEAD")) && lstat(path.join(dir, "objects"))) return undefined;
    const parent = path.dirname(dir);
    if (parent === dir) return "plain";
    if (lstat(parent)?.dev !== rootStat.dev) return undefined;
    dir = parent;
  }
}

function isOutside(dir: string, target: string): boolean {
  return climbsOut(path.relative(dir, target));
}

/**
 * Whether a `.git` above `dir` could be a repository git failed to read: a gitfile, or a directory
 * holding any of a repository's parts. An empty `.git` directory (or one with none of them) is no
 * repository to git, which looks further up and then calls the folder plain: so does ghostcommit.
 */
function findGitAbove(dir: string): boolean {
  for (let current = dir; ; current = path.dirname(current)) {
    const dotGit = path.join(current, ".git");
    const stat = lstatSync(dotGit, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) return true;
    if (stat && ["HEAD", "objects", "refs"].some((part) => existsSync(path.join(dotGit, part)))) return true;
    if (path.dirname(current) === current) return false;
  }
}

/** The location `root` had as a plain folder (its store is keyed without a git directory). */
export function plainLocation(root: string): WorkspaceLocation {
  return { root, kind: "plain", prefix: "", key: keyOf(root, "") };
}

/** A stable key for a directory and its git directory ("" for none): workspaces, work trees. */
export function keyOf(root: string, gitDir: string): string {
  return sha256Hex(`${root}\0${gitDir}`).slice(0, 20);
}

/** The commit HEAD points at, or null for an unborn branch. */
export async function readHead(location: WorkspaceLocation): Promise<string | null> {
  if (location.kind !== "git") return null;
  const fromFiles = await readHeadFromFiles(location.gitDir!, location.commonDir!);
  if (fromFiles !== undefined) return fromFiles;
  const result = await runGit(["rev-parse", "-q", "--verify", "HEAD^{commit}"], {
    cwd: location.root,
    okCodes: [0, 1, 128],
  });
  const oid = result.stdout.toString("latin1").trim();
  return result.code === 0 && /^[0-9a-f]{40}$/.test(oid) ? oid : null;
}

const OID = /^[0-9a-f]{40}$/;

/**
 * Resolves HEAD by reading the ref files as git lays them out (HEAD, loose refs, packed-refs),
 * saving a git process per snapshot. Returns null for an unborn branch and undefined for anything
 * unusual, which the caller leaves to git.
 */
async function readHeadFromFiles(gitDir: string, commonDir: string): Promise<string | null | undefined> {
  let content = (await readOptional(path.join(gitDir, "HEAD")))?.toString("utf8").trim();
  for (let depth = 0; depth < 5 && content !== undefined; depth++) {
    if (OID.test(content)) return content;
    const match = /^ref: (refs\/[^\s]+)$/.exec(content);
    if (!match || match[1].includes("..")) return undefined;
    const ref = match[1];
    // Per-worktree refs live in the worktree's git dir, the rest in the common dir.
    const perWorktree = ref.startsWith("refs/worktree/") || ref.startsWith("refs/bisect/");
    const loose = await readOptional(path.join(perWorktree ? gitDir : commonDir, ref));
    if (loose) {
      content = loose.toString("utf8").trim();
      continue;
    }
    const packed = (await readOptional(path.join(commonDir, "packed-refs")))?.toString("utf8") ?? "";
    for (const line of packed.split("\n")) {
      if (line.endsWith(` ${ref}`) && OID.test(line.slice(0, 40))) return line.slice(0, 40);
    }
    return null; // a branch with no commit yet
  }
  return undefined;
}

/** Reads a small file, or null when it is absent (synchronously: see `readJson`). */
export async function readOptional(file: string): Promise<Buffer | null> {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}
