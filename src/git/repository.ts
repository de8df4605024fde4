import { createHash } from "node:crypto";
import { existsSync, promises as fs, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { runGit } from "./exec.js";
import { type RelPath, relFromText } from "../paths.js";

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

/** Finds the repository (if any) around `cwd`. */
export async function locateWorkspace(cwd: string): Promise<WorkspaceLocation> {
  let root: string;
  try {
    root = realpathSync(cwd);
    if (!statSync(root).isDirectory()) throw new Error("not a directory");
  } catch (error) {
    throw new GhostcommitError("not-a-workspace", `not a directory: ${cwd}`, { path: cwd }, error);
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
    if (findGitAbove(root)) {
      throw new GhostcommitError(
        "not-a-workspace",
        `git cannot read the repository around ${root}: ${(error as GhostcommitError).message}`,
        { path: root },
        error,
      );
    }
    return { root, kind: "plain", prefix: "", key: keyOf(root, "") };
  }
  if (lines[0] === "true") {
    throw new GhostcommitError("not-a-workspace", `${root} is inside a .git directory`, { path: root });
  }
  const worktreeRoot = lines[1];
  if (!worktreeRoot) {
    throw new GhostcommitError("not-a-workspace", `${root} is in a bare repository`, { path: root });
  }
  const gitDir = lines[2];
  const commonDir = path.resolve(root, lines[3]);
  const prefix = relFromText(lines[4].replace(/\/$/, ""));
  return { root, kind: "git", worktreeRoot, prefix, gitDir, commonDir, key: keyOf(root, gitDir) };
}

function findGitAbove(dir: string): boolean {
  for (let current = dir; ; current = path.dirname(current)) {
    if (existsSync(path.join(current, ".git"))) return true;
    if (path.dirname(current) === current) return false;
  }
}

function keyOf(root: string, gitDir: string): string {
  return createHash("sha256").update(`${root}\0${gitDir}`).digest("hex").slice(0, 20);
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

/** Reads a small file, or null when it is absent. */
export async function readOptional(file: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(file);
  } catch {
    return null;
  }
}
