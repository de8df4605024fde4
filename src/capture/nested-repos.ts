import { indexEntryCount } from "../git/index-file.js";
import { promises as fs } from "node:fs";
import path from "node:path";
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
import { classifyUntracked, dataDirWithin, ghostignoreMatch } from "./policy.js";
import { captureWorktreePath } from "./read-worktree.js";
import type { TreeChanges } from "../git/trees.js";
import { MODE } from "../git/objects.js";
import { looksLikeRepository } from "./nested-check.js";
import type { IgnoreRules } from "./ghostignore.js";

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
 * The repositories inside each (its submodules, nested ones) are treated as a git workspace
 * treats its own: captured the same way with `"nestedRepos": "capture"`, else a nested one is
 * excluded and a submodule kept as the commit checked out in it.
 */
export async function captureNestedRepos(
  ctx: CaptureContext,
  roots: RelPath[],
  ghostignore: IgnoreRules | null,
  /** Touched and included paths: captured even if the repository ignores them. */
  forced: ReadonlySet<RelPath> = new Set(),
): Promise<NestedCapture> {
  const out: NestedCapture = { files: new Map(), roots: [], excluded: [] };
  const dependencyDirs = new Set(ctx.settings.dependencyDirs);
  const captureInner = ctx.settings.nestedRepos === "capture";
  const queue = new Set(roots); // grows with the repositories found inside those captured
  for (const root of queue) {
    const dir = fsPath(ctx.location.root, root).toString("utf8");
    const tracked = await trackedCount(dir);
    if (tracked > ctx.settings.budgetFiles) {
      out.excluded.push({ path: root, reason: "budget", files: tracked });
      continue;
    }
    let listed: { tracked: Map<RelPath, string | null>; untracked: RelPath[] };
    try {
      listed = await listRepository(dir);
    } catch {
      out.excluded.push({ path: root, reason: "unreadable" });
      continue;
    }
    const inside = (rel: RelPath) => `${root}/${rel}`;
    const policy = classifyUntracked({
      untracked: listed.untracked.map(inside),
      dataDir: dataDirWithin(ctx.location.root),
      dependencyDirs,
      largeDirFiles: null,
      ghostignore,
      isTrackedDir: () => false,
    });
    for (const entry of policy.excluded) {
      if (captureInner && entry.reason === "nested-repo") queue.add(entry.path);
      else out.excluded.push(entry);
    }
    const reads: { rel: RelPath; limit: number | null; gitlink: string | null }[] = [];
    for (const [path, gitlink] of listed.tracked) {
      const rel = inside(path);
      const matched = ghostignoreMatch(rel, ghostignore);
      if (matched) out.excluded.push({ path: matched, reason: "ignore-file" });
      else if (gitlink && looksLikeRepository(ctx.location.root, rel)) {
        // A submodule checked out here: git's walk of this repository does not enter it.
        if (captureInner) queue.add(rel);
        else {
          const head = await submoduleHead(fsPath(ctx.location.root, rel).toString("utf8"));
          out.files.set(rel, { mode: MODE.gitlink, oid: head ?? gitlink });
        }
      } else reads.push({ rel, limit: null, gitlink });
    }
    for (const rel of policy.capture) reads.push({ rel, limit: ctx.settings.largeFileBytes, gitlink: null });
    // Touched files its rules leave out (ignored ones) are captured all the same.
    const taken = new Set([...reads.map((r) => r.rel), ...[...listed.tracked.keys()].map(inside)]);
    for (const rel of forced) {
      if (!rel.startsWith(`${root}/`) || taken.has(rel) || touchesGitDir(rel)) continue;
      const matched = ghostignoreMatch(rel, ghostignore);
      if (matched) out.excluded.push({ path: matched, reason: "ignore-file" });
      else reads.push({ rel, limit: ctx.settings.largeFileBytes, gitlink: null });
    }
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
      // A submodule not checked out: the commit its repository records, as git keeps it.
      else if (result.kind === "directory" && read.gitlink)
        out.files.set(read.rel, { mode: MODE.gitlink, oid: read.gitlink });
      // absent: a tracked file deleted
    });
    out.roots.push(root);
  }
  out.roots.sort();
  return out;
}

/**
 * Tracked paths of the repository at `dir` (each with its commit when it is a submodule) and
 * untracked-not-ignored ones (nested repositories as "dir/").
 */
async function listRepository(
  dir: string,
): Promise<{ tracked: Map<RelPath, string | null>; untracked: RelPath[] }> {
  // Read-only: no optional locks (no index refresh), no fsmonitor hook of the user's config runs.
  const env = { GIT_OPTIONAL_LOCKS: "0" };
  const config = ["-c", "core.fsmonitor=false"];
  const [staged, others] = await Promise.all([
    runGit([...config, "ls-files", "-z", "--stage"], { cwd: dir, env }),
    runGit([...config, "ls-files", "-z", "--others", "--exclude-standard"], { cwd: dir, env }),
  ]);
  const tracked = new Map<RelPath, string | null>();
  for (const part of splitNul(staged.stdout)) {
    // "<mode> <id> <stage>\t<path>"; a conflict lists a path once per stage.
    const tab = part.indexOf(0x09);
    const [mode, oid] = part.subarray(0, tab).toString("latin1").split(" ");
    tracked.set(relFromBytes(part.subarray(tab + 1)), mode === MODE.gitlink ? oid : null);
  }
  return { tracked, untracked: splitNul(others.stdout).map(relFromBytes) };
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
