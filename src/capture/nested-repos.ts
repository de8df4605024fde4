import { indexEntryCount } from "../git/index-file.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Ignore } from "ignore";
import { runGit, splitNul } from "../git/exec.js";
import {
  ancestorsOf,
  fsPath,
  isWithin,
  type RelPath,
  relFromBytes,
  relFromText,
  touchesGitDir,
} from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";
import { mapLimit } from "../util/pool.js";
import type { CaptureContext } from "./context.js";
import { classifyUntracked, ghostignoreMatch } from "./policy.js";
import { captureWorktreePath } from "./read-worktree.js";
import type { TreeChanges } from "../git/trees.js";
import { looksLikeRepository } from "./nested-check.js";

/** What the repositories nested in a workspace contribute to its snapshot. */
export interface NestedCapture {
  /** Every captured file below the captured repositories (to add to the workspace's tree). */
  files: TreeChanges;
  /** Repositories captured, workspace-relative: their own ignore rules decide deletion proofs. */
  roots: RelPath[];
  excluded: StoredExclusion[];
}

/**
 * Captures git repositories nested in the workspace, each by its own rules: its tracked files
 * and the untracked files its own ignore rules (`.gitignore`, `info/exclude`, `core.excludesFile`)
 * do not ignore, never its `.git`. One `git ls-files` per repository (its index and one walk,
 * like a `git status`), which writes nothing in it; contents go through the store's stat cache.
 * A repository with more files than the plain-directory budget is reported, not walked.
 */
export async function captureNestedRepos(
  ctx: CaptureContext,
  roots: RelPath[],
  ghostignore: Ignore | null,
): Promise<NestedCapture> {
  const out: NestedCapture = { files: new Map(), roots: [], excluded: [] };
  const dependencyDirs = new Set(ctx.settings.dependencyDirs);
  for (const root of roots) {
    const dir = fsPath(ctx.location.root, root).toString("utf8");
    const tracked = await trackedCount(dir);
    if (tracked > ctx.settings.budgetFiles) {
      out.excluded.push({ path: root, reason: "budget", files: tracked });
      continue;
    }
    let listed: { tracked: RelPath[]; untracked: RelPath[] };
    try {
      listed = await listRepository(dir);
    } catch {
      out.excluded.push({ path: root, reason: "unreadable" });
      continue;
    }
    const inside = (rel: RelPath) => `${root}/${rel}`;
    const policy = classifyUntracked({
      untracked: listed.untracked.map(inside),
      dependencyDirs,
      largeDirFiles: null,
      ghostignore,
      isTrackedDir: () => false,
    });
    out.excluded.push(...policy.excluded);
    const reads = [
      ...listed.tracked.map(inside).flatMap((rel) => {
        const matched = ghostignoreMatch(rel, ghostignore);
        if (matched) out.excluded.push({ path: matched, reason: "ignore-file" });
        return matched ? [] : [{ rel, limit: null as number | null }];
      }),
      ...policy.capture.map((rel) => ({ rel, limit: ctx.settings.largeFileBytes as number | null })),
    ];
    const results = await mapLimit(reads, 8, (read) =>
      captureWorktreePath(ctx.location.root, read.rel, ctx.writer, ctx.cache, read.limit),
    );
    reads.forEach((read, i) => {
      const result = results[i];
      if (result.kind === "file") out.files.set(read.rel, result.state);
      else if (result.kind === "large")
        out.excluded.push({ path: read.rel, reason: "large-file", bytes: result.size, files: 1 });
      else if (result.kind === "unreadable" || result.kind === "special")
        out.excluded.push({ path: read.rel, reason: "unreadable" });
      // absent (a tracked file deleted) and directories (its own submodules) hold nothing to capture
    });
    out.roots.push(root);
  }
  return out;
}

/** Tracked and untracked-not-ignored paths of the repository at `dir` (nested ones as "dir/"). */
async function listRepository(dir: string): Promise<{ tracked: RelPath[]; untracked: RelPath[] }> {
  // Read-only: no optional locks (no index refresh), no fsmonitor hook of the user's config runs.
  const env = { GIT_OPTIONAL_LOCKS: "0" };
  const config = ["-c", "core.fsmonitor=false"];
  const [cached, others] = await Promise.all([
    runGit([...config, "ls-files", "-z", "--cached"], { cwd: dir, env }),
    runGit([...config, "ls-files", "-z", "--others", "--exclude-standard"], { cwd: dir, env }),
  ]);
  return {
    tracked: [...new Set(splitNul(cached.stdout).map(relFromBytes))],
    untracked: splitNul(others.stdout).map(relFromBytes),
  };
}

/** How many entries the repository's index holds (its header), without running git. */
async function trackedCount(dir: string): Promise<number> {
  const gitDir = await gitDirOf(dir);
  return gitDir ? ((await indexEntryCount(path.join(gitDir, "index"))) ?? 0) : 0;
}

/** The git directory of the work tree at `dir`: `.git` itself, or where a `.git` file points. */
async function gitDirOf(dir: string): Promise<string | null> {
  const dotGit = path.join(dir, ".git");
  const stat = await fs.lstat(dotGit).catch(() => null);
  if (!stat) return null;
  if (stat.isDirectory()) return dotGit;
  const text = await fs.readFile(dotGit, "utf8").catch(() => "");
  const match = /^gitdir: (.+)$/m.exec(text);
  return match ? path.resolve(dir, match[1].trim()) : null;
}

/** True when `dir` (workspace-relative) is the work tree of a git repository (`.git` dir or file). */
export async function isRepository(workspaceRoot: string, dir: RelPath): Promise<boolean> {
  return (await gitDirOf(fsPath(workspaceRoot, dir).toString("utf8"))) !== null;
}

/**
 * The repositories nested in a plain folder: those git's walk reported as nested (`nested-repo`
 * exclusions), and directories above listed files that hold a `.git` (a folder that became a
 * repository after its files were first captured). Each directory is checked once.
 */
export async function nestedRoots(
  workspaceRoot: string,
  reported: StoredExclusion[],
  listed: RelPath[],
): Promise<Set<RelPath>> {
  const roots = new Set(reported.filter((e) => e.reason === "nested-repo").map((e) => e.path));
  const checked = new Map<RelPath, boolean>();
  for (const rel of listed) {
    for (const dir of ancestorsOf(rel)) {
      let isRepo = checked.get(dir);
      if (isRepo === undefined) {
        isRepo = looksLikeRepository(workspaceRoot, dir);
        checked.set(dir, isRepo);
      }
      if (isRepo) {
        roots.add(dir);
        break; // the outermost repository captures what is below it
      }
    }
  }
  return roots;
}

/**
 * The repositories nested in a git workspace to capture by their own rules: none unless the
 * config says `"nestedRepos": "capture"`; then the untracked ones git reported (`nested-repo`) and
 * the initialized submodules `.gitmodules` lists below the workspace.
 */
export async function nestedReposToCapture(
  ctx: CaptureContext,
  reported: StoredExclusion[],
): Promise<RelPath[]> {
  if (ctx.settings.nestedRepos !== "capture") return [];
  const roots = new Set(reported.filter((e) => e.reason === "nested-repo").map((e) => e.path));
  const { worktreeRoot, prefix, root } = ctx.location;
  const modules = await fs.readFile(path.join(worktreeRoot!, ".gitmodules"), "utf8").catch(() => "");
  for (const match of modules.matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)) {
    const full = relFromText(match[1]);
    if (!isWithin(full, prefix) || full === prefix) continue;
    const rel = prefix === "" ? full : full.slice(prefix.length + 1);
    if (!touchesGitDir(rel) && (await isRepository(root, rel))) roots.add(rel);
  }
  return [...roots].sort();
}

/** The commit checked out in a submodule's work tree, or null when git cannot tell. */
export async function submoduleHead(dir: string): Promise<string | null> {
  const result = await runGit(["rev-parse", "--verify", "-q", "HEAD"], {
    cwd: dir,
    okCodes: [0, 1, 128],
  }).catch(() => null);
  const oid = result?.code === 0 ? result.stdout.toString("latin1").trim() : "";
  return /^[0-9a-f]{40}$/.test(oid) ? oid : null;
}
