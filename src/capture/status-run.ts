import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { indexChecksum } from "../git/index-file.js";
import { parseStatusV2 } from "../git/status.js";
import { fsPath, type RelPath, relBytes, relFromBytes } from "../paths.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { trace } from "../util/trace.js";
import type { CaptureContext } from "./context.js";

export interface StatusResult {
  /** `git status --porcelain=2 -z` output; untracked directories may come collapsed ("dir/"). */
  stdout: Buffer;
  /** Each collapsed untracked directory's untracked files (a nested repository as "dir/"). */
  collapsed: Map<RelPath, RelPath[]>;
  /** The index status compared against (a private copy of the user's). */
  indexFile: string;
}

/**
 * Runs status from a throw-away git directory that shares the store's config and attributes (no
 * conversions, no hooks) and whose HEAD is the user's, against a private copy of the user's index
 * carrying git's untracked cache: unchanged directories are not read again, so it costs less than
 * a status of every untracked file. Directories it reports collapsed are listed afterwards with
 * git's own ignore rules. The user's `core.excludesFile` is passed on (the store's config would
 * hide a repository-level one), so status ignores exactly what the user's git ignores.
 */
export async function runStatus(
  ctx: CaptureContext,
  head: string | null,
  worktreeRoot: string,
  prefix: RelPath,
  excludesFile: string | null,
): Promise<StatusResult> {
  const tempGitDir = path.join(ctx.paths.tmpDir, `gitdir-${process.pid}-${randomBytes(4).toString("hex")}`);
  const userIndex = path.join(ctx.location.gitDir!, "index");
  const copy = await privateIndex(ctx.paths.dir, ctx.location.gitDir!);
  const indexFile = copy ?? userIndex;
  await fs.mkdir(tempGitDir, { recursive: true, mode: 0o700 });
  try {
    await fs.writeFile(
      path.join(tempGitDir, "HEAD"),
      head ? `${head}\n` : "ref: refs/heads/ghostcommit-unborn\n",
      { mode: 0o600 },
    );
    await fs.writeFile(path.join(tempGitDir, "commondir"), `${ctx.paths.gitDir}\n`, { mode: 0o600 });
    const config = excludesFile === null ? [] : ["-c", `core.excludesFile=${excludesFile}`];
    const env = {
      GIT_DIR: tempGitDir,
      GIT_WORK_TREE: worktreeRoot,
      GIT_INDEX_FILE: indexFile,
      // Git may write the private index (that is how the untracked cache persists), never the user's.
      GIT_OPTIONAL_LOCKS: copy ? "1" : "0",
    };
    const args = [
      ...config,
      "-c",
      "core.untrackedCache=true",
      // Git keeps an untracked cache only for the untracked mode its config names.
      "-c",
      `status.showUntrackedFiles=${copy ? "normal" : "all"}`,
      "status",
      "--porcelain=2",
      "-z",
      copy ? "--untracked-files=normal" : "--untracked-files=all",
      "--no-renames",
      "--ignore-submodules=all",
    ];
    if (prefix !== "") args.push("--", relBytes(prefix).toString("utf8"));
    trace("capture: status started");
    let stdout: Buffer;
    try {
      stdout = (await runGit(args, { cwd: worktreeRoot, env })).stdout;
    } catch (error) {
      if (!copy) throw error;
      // A damaged private copy is dropped (made again next time), with the lock a killed git
      // left on it (a live one is seconds old); this status reads the user's. Awaited here: the
      // temporary git dir must outlive it.
      await fs.rm(copy, { force: true });
      const lock = await fs.stat(`${copy}.lock`).catch(() => null);
      if (lock && Date.now() - lock.mtimeMs > 60_000) await fs.rm(`${copy}.lock`, { force: true });
      return await runStatusReadOnly(args, env, worktreeRoot, userIndex);
    }
    trace("capture: status done");
    const dirs = [...collapsedDirs(stdout), ...(await deletedNowDirectories(stdout, worktreeRoot))];
    // A name that is not UTF-8 cannot be passed on as a pathspec: list everything instead.
    if (dirs.some((dir) => dir.includes("\ufffd")))
      return await runStatusReadOnly(args, env, worktreeRoot, indexFile);
    // One listing for all of them (each spawn costs milliseconds); the directories are disjoint.
    const collapsed = new Map<RelPath, RelPath[]>();
    for (const dir of dirs) collapsed.set(relFromBytes(Buffer.from(dir, "utf8")), []);
    if (dirs.length > 0) {
      const listed = await runGit([...config, "ls-files", "-o", "--exclude-standard", "-z", "--", ...dirs], {
        cwd: worktreeRoot,
        env: { ...env, GIT_OPTIONAL_LOCKS: "0" },
      });
      const owners = [...collapsed.keys()];
      let owner: RelPath | undefined; // git lists in order, so a directory's files come together
      for (const file of splitNul(listed.stdout).map(relFromBytes)) {
        if (owner === undefined || !file.startsWith(owner)) owner = owners.find((dir) => file.startsWith(dir));
        if (owner !== undefined) collapsed.get(owner)!.push(file);
      }
      trace(`capture: ${dirs.length} collapsed untracked dirs listed`);
    }
    return { stdout, collapsed, indexFile };
  } finally {
    await fs.rm(tempGitDir, { recursive: true, force: true });
  }
}

/** Status of every untracked file against `indexFile`, which git does not write. */
async function runStatusReadOnly(
  args: string[],
  env: NodeJS.ProcessEnv,
  worktreeRoot: string,
  indexFile: string,
): Promise<StatusResult> {
  const all = args.map((arg) => (arg === "--untracked-files=normal" ? "--untracked-files=all" : arg));
  const readOnly = { ...env, GIT_INDEX_FILE: indexFile, GIT_OPTIONAL_LOCKS: "0" };
  const { stdout } = await runGit(all, { cwd: worktreeRoot, env: readOnly });
  return { stdout, collapsed: new Map(), indexFile };
}

/**
 * Tracked files deleted from the work tree whose path is now a directory. In its normal untracked
 * mode git 2.39 reports such a directory's files nowhere, so they are listed like collapsed ones.
 */
async function deletedNowDirectories(output: Buffer, worktreeRoot: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const entry of parseStatusV2(output)) {
    if (entry.kind !== "changed" || entry.y !== "D") continue;
    const stat = await fs.lstat(fsPath(worktreeRoot, entry.path)).catch(() => null);
    if (stat?.isDirectory()) dirs.push(`${relBytes(entry.path).toString("utf8")}/`);
  }
  return dirs;
}

/** The "? dir/" records of status output, as strings git reads back as the same bytes. */
function collapsedDirs(output: Buffer): string[] {
  const dirs: string[] = [];
  for (const record of splitNul(output)) {
    if (record[0] === 0x3f && record[record.length - 1] === 0x2f) {
      dirs.push(record.subarray(2).toString("utf8"));
    }
  }
  return dirs;
}

/**
 * The private index status runs against: a copy of the user's index, made again whenever the
 * user's git writes a new one (its checksum changes). Null for a split index, whose shared part
 * git looks for beside the user's index only: then status reads the user's index without writing.
 */
async function privateIndex(storeDir: string, userGitDir: string): Promise<string | null> {
  const names = await fs.readdir(userGitDir).catch(() => [] as string[]);
  if (names.some((name) => name.startsWith("sharedindex."))) return null;
  const userIndex = path.join(userGitDir, "index");
  const target = path.join(storeDir, STORE_FILES.statusIndex);
  const stampFile = path.join(storeDir, STORE_FILES.statusIndexSource);
  const checksum = await indexChecksum(userIndex);
  const stamp = await readJson<{ source?: string | null } | null>(stampFile, null);
  const present = await fs
    .access(target)
    .then(() => true)
    .catch(() => false);
  if (stamp?.source === checksum && (present || checksum === null)) return target;
  const temp = `${target}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  if (checksum === null) await fs.rm(target, { force: true });
  else {
    // The copy keeps (just under) the original's mtime: git treats entries modified at or after
    // its index's mtime as "racily clean" and compares their content, and a fresh mtime would
    // make it trust a same-size edit made within the file system's timestamp granularity.
    const { mtimeMs, atime } = await fs.stat(userIndex);
    await fs.copyFile(userIndex, temp);
    await fs.chmod(temp, 0o600); // private, as everything under the data home
    await fs.utimes(temp, atime, new Date(Math.floor(mtimeMs) - 1));
    await fs.rename(temp, target);
  }
  await writeFileAtomic(stampFile, JSON.stringify({ source: checksum }));
  return target;
}
