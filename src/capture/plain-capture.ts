import { lstatSync, rmSync } from "node:fs";
import path from "node:path";
import { MANY_OBJECTS_ENV, runGit, splitNul } from "../git/exec.js";
import { ancestorsOf, fsPath, type RelPath, relBytes, relFromBytes, touchesGitDir } from "../paths.js";
import { STORE_FILES } from "../store/layout.js";
import type { StoredExclusion } from "../store/metadata.js";
import { withLock } from "../util/lock.js";
import type { CaptureContext, Captured } from "./context.js";
import { plainGhostignore } from "./ghostignore-dirs.js";
import { ignoresCase } from "./conversion.js";
import { expandIncludes } from "./includes.js";
import { captureNestedRepos, nestedRoots } from "./nested-repos.js";
import { isDirectory, listNewDirectory } from "./plain-walk.js";
import { listChanges } from "./plain-status.js";
import {
  classifyUntracked,
  dataDirWithin,
  ghostignoreMatch,
  sortExclusions,
  withoutIncludedDirs,
} from "./policy.js";
import { editTree } from "../git/trees.js";
import { indexEntryCount } from "../git/index-file.js";
import { indexExtensions } from "../git/index-walk.js";
import { cacheTreeRoot } from "../git/cache-tree.js";
import { captureOverIndexTree, DEFERRED_PATHS_LIMIT } from "./plain-deferred.js";
import { applyBudget, type Candidate, groupBudgetExclusions, indexedBytes } from "./plain-budget.js";
import { readState, writeState } from "./plain-state.js";
import { addToPlainIndex, nulList } from "./plain-add.js";

/**
 * Captures a directory that is not in any git repository. The store keeps its own index of the
 * directory (stat cache included), so after the first snapshot only changed files are read.
 * Every file counts, whatever `.gitignore` files say; dependency dirs are pruned from git's walk.
 */
export async function capturePlain(ctx: CaptureContext, includes: RelPath[]): Promise<Captured> {
  const indexFile = path.join(ctx.paths.dir, STORE_FILES.plainIndex);
  return withLock(path.join(ctx.paths.dir, STORE_FILES.plainIndexLock), async () => {
    rmSync(`${indexFile}.lock`, { force: true }); // left by a killed run; we hold the real lock
    const env = { ...ctx.readEnv, GIT_WORK_TREE: ctx.location.root, GIT_INDEX_FILE: indexFile };
    const depNames = new Set(ctx.settings.dependencyDirs);
    const [indexedBefore, stateBefore] = await Promise.all([
      indexEntryCount(indexFile).then((count) => count ?? 0),
      readState(ctx.paths.dir),
    ]);
    // The untracked cache status keeps in the index survives the commands that rewrite it (the
    // store's config turns it off), and they mark where the entries end (see `indexExtensions`).
    // Not after a .gitignore was seen: git may keep its record after the file is gone (see
    // `untrackedCacheIgnoreFileDirs`), so the index is written without it; status makes it again.
    const untrackedCache = stateBefore.ignoreFiles ? "false" : "keep";
    const keep = ["-c", `core.untrackedCache=${untrackedCache}`, "-c", "index.recordEndOfIndexEntries=true"];
    const git = (args: string[], input?: Buffer, okCodes?: number[]) =>
      runGit([...keep, ...args], { cwd: ctx.location.root, env, input, okCodes });
    // The commands that may write thousands of objects (a first snapshot's every file).
    const many = { ...env, ...MANY_OBJECTS_ENV };
    const writeObjects = (args: string[], input?: Buffer, okCodes?: number[]) =>
      runGit([...keep, ...args], { cwd: ctx.location.root, env: many, input, okCodes });
    const listing = await listChanges(ctx, git, indexFile, indexedBefore, stateBefore, depNames);
    const { walked } = listing;
    const ignoreCase = await ignoresCase(ctx.location);
    const indexedFiles = async () => splitNul((await git(["ls-files", "-z"])).stdout).map(relFromBytes);
    const ghostignore = await plainGhostignore(ctx, ignoreCase, listing, indexedFiles);
    const matcher = ghostignore?.matcher ?? null;
    const excluded: StoredExclusion[] = [];

    const toRemove = new Set<RelPath>();
    const toAdd: RelPath[] = [];
    /** Paths known to be in the store's index (removals of others do not shrink it). */
    const indexed = new Set<RelPath>();
    for (const { path: rel, deleted } of listing.changed) {
      indexed.add(rel);
      if (deleted) toRemove.add(rel);
      else toAdd.push(rel);
    }
    if (indexedBefore > 0) {
      // Git's walk skips a directory that took the place of a captured file: list it here.
      for (const rel of toRemove) {
        if (isDirectory(fsPath(ctx.location.root, rel)))
          listNewDirectory(ctx.location.root, rel, depNames, walked);
      }
    }
    for (const dir of walked.dependencyDirs) excluded.push({ path: dir, reason: "dependency-dir" });
    for (const dir of walked.unreadableDirs) excluded.push({ path: dir, reason: "unreadable" });
    for (const dir of walked.gitDirs) excluded.push({ path: dir.path, reason: "nested-repo" });
    // .ghostignore changed: entries captured before may now be excluded.
    const ghostignoreChanged = (ghostignore?.hash ?? null) !== stateBefore.ghostignoreHash;
    if (ghostignoreChanged && matcher) {
      const listed = await git(["ls-files", "-z"]);
      for (const part of splitNul(listed.stdout)) {
        const rel = relFromBytes(part);
        indexed.add(rel);
        if (ghostignoreMatch(rel, matcher)) toRemove.add(rel);
      }
    }
    const policy = classifyUntracked({
      untracked: walked.untracked,
      dataDir: dataDirWithin(ctx.location.root),
      dependencyDirs: depNames,
      largeDirFiles: null,
      ghostignore: matcher,
      isTrackedDir: () => false,
    });
    // Git repositories in the folder (a `fe/` and a `be/`) are captured each by its own rules.
    const roots = await nestedRoots(ctx.location.root, policy.excluded, [...toAdd, ...policy.capture]);
    excluded.push(...policy.excluded.filter((e) => !(e.reason === "nested-repo" && roots.has(e.path))));
    const aside = new Set([...roots, ...walked.gitDirs.map((d) => d.path)]); // their own rules, or never
    const inRepo = (rel: RelPath) => ancestorsOf(rel).some((dir) => aside.has(dir));
    // Files captured plainly before: in a directory that became a repository since, or in a git directory.
    const gitDirsListed = walked.gitDirs.flatMap((d) => (d.listed ? [d.path] : []));
    const becameRepository =
      gitDirsListed.length > 0 || [...roots].some((r) => !policy.excluded.some((e) => e.path === r));
    if (becameRepository) {
      const specs = [...roots, ...gitDirsListed].map((r) => relBytes(r).toString("utf8"));
      const listed = await git(["ls-files", "-z", "--", ...specs]);
      for (const part of splitNul(listed.stdout)) toRemove.add(relFromBytes(part));
    }
    const forced = new Set(await expandIncludes(ctx.location.root, includes));
    const nested = await captureNestedRepos(ctx, [...roots].sort(), matcher, forced);
    excluded.push(...nested.excluded);
    // In the last snapshot: in the index and not left out since, or added over it (see below).
    const addedOver = new Set(stateBefore.addedOverIndex ?? []);
    const removedOver = new Set(stateBefore.removedOverIndex ?? []);
    const capturedBefore = (rel: RelPath) =>
      addedOver.has(rel) || (indexed.has(rel) && !removedOver.has(rel));
    const candidates: Candidate[] = [];
    const seen = new Set<RelPath>();
    for (const rel of [...toAdd, ...policy.capture, ...forced]) {
      if (seen.has(rel) || touchesGitDir(rel)) continue;
      seen.add(rel);
      // The repository's capture takes it, touched too (the store's index would hide the repository).
      if (inRepo(rel)) continue;
      if (ghostignoreMatch(rel, matcher)) {
        toRemove.add(rel);
        if (forced.has(rel)) excluded.push({ path: rel, reason: "ignore-file" });
        continue;
      }
      let stat: import("node:fs").Stats;
      try {
        // Synchronous: a first snapshot stats every file, and a thread-pool trip each costs 10×.
        stat = lstatSync(fsPath(ctx.location.root, rel));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") toRemove.add(rel);
        else excluded.push({ path: rel, reason: "unreadable" });
        continue;
      }
      if (stat.isDirectory()) {
        toRemove.add(rel);
        continue;
      }
      if (!stat.isFile() && !stat.isSymbolicLink()) {
        excluded.push({ path: rel, reason: "unreadable" });
        toRemove.add(rel);
        continue;
      }
      if (stat.isFile() && stat.size > ctx.settings.largeFileBytes) {
        excluded.push({ path: rel, reason: "large-file", bytes: stat.size, files: 1 });
        toRemove.add(rel);
        continue;
      }
      candidates.push({
        path: rel,
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        forced: forced.has(rel),
        captured: capturedBefore(rel),
      });
    }

    // Files the index keeps untouched: only removals of indexed paths shrink it, and changed
    // indexed files are counted again as candidates (was: every removal counted, so an excluded
    // untracked file let one more file past the budget).
    const removedIndexed = [...toRemove].filter((rel) => indexed.has(rel)).length;
    const readded = toAdd.filter((rel) => !toRemove.has(rel)).length;
    const existingFiles = indexedBefore - removedIndexed - readded;
    // The byte budget is a total: what the index keeps counts. The bound recorded when the index
    // was last written spares its walk until the candidates may not fit beside it.
    const tree = indexedBefore > 0 ? indexExtensions(indexFile, new Set(["TREE"]))?.get("TREE") : undefined;
    const sameIndex = tree !== undefined && cacheTreeRoot(tree) === stateBefore.indexTree;
    const bound = sameIndex ? stateBefore.bytes : undefined;
    const adding = candidates.reduce((total, c) => total + c.size, 0);
    const leaving = () => new Set([...toRemove, ...toAdd].filter((rel) => indexed.has(rel)));
    const existingBytes =
      indexedBefore === 0
        ? 0
        : bound !== undefined && bound + adding <= ctx.settings.budgetBytes
          ? bound
          : (indexedBytes(indexFile, indexedBefore, leaving()) ?? 0);
    const existing = { files: Math.max(0, existingFiles), bytes: existingBytes };
    const kept = applyBudget(candidates, existing, ctx.settings.budgetFiles, ctx.settings.budgetBytes);
    if (kept.dropped.length > 0) {
      // Files that stay captured: kept candidates and index entries this run does not remove.
      const dropped = new Set(kept.dropped.map((c) => c.path));
      const indexed = splitNul((await git(["ls-files", "-z"])).stdout).map(relFromBytes);
      const staying = [
        ...kept.add.map((c) => c.path),
        ...indexed.filter((rel) => !toRemove.has(rel) && !dropped.has(rel)),
      ];
      excluded.push(...groupBudgetExclusions(kept.dropped, staying));
    }
    // Few paths outstanding and the index still the tree it was last written as (status only
    // refreshes its stat data and cache; a write cut short by a kill invalidates its cache tree):
    // the index is left as it is.
    if (
      stateBefore.indexTree &&
      sameIndex &&
      !ghostignoreChanged &&
      !becameRepository &&
      kept.dropped.length === 0 &&
      kept.add.length + toRemove.size <= DEFERRED_PATHS_LIMIT
    ) {
      const untracked = new Set(walked.untracked);
      const inIndex = (rel: RelPath) => (indexed.has(rel) ? true : untracked.has(rel) ? false : null);
      // The index's tree unreadable (a damaged store): the index is written, as on any other day.
      const deferred = await captureOverIndexTree(ctx, {
        indexTree: stateBefore.indexTree,
        indexFiles: indexedBefore,
        reads: kept.add.map((c) => ({ path: c.path, indexed: inIndex(c.path) })),
        removals: [...toRemove].map((rel) => ({ path: rel, indexed: inIndex(rel) })),
        nestedFiles: nested.files,
      }).catch(() => null);
      if (deferred) {
        // The files this snapshot holds that the index does not name are still captured ones
        // for the next snapshot's budget, which sees them as new to the index.
        const state = {
          ...stateBefore,
          ...(listing.ignoreFiles !== null ? { ignoreFiles: listing.ignoreFiles } : {}),
          addedOverIndex: deferred.added,
          removedOverIndex: deferred.removed,
        };
        if (JSON.stringify(state) !== JSON.stringify(stateBefore)) await writeState(ctx.paths.dir, state);
        return {
          tree: deferred.tree,
          parent: null,
          fileCount: deferred.fileCount + nested.files.size,
          excluded: sortExclusions(withoutIncludedDirs([...excluded, ...deferred.excluded], includes)),
          included: [...forced].filter((rel) => deferred.captured.has(rel) || nested.files.has(rel)),
          ...(nested.roots.length > 0 ? { nested: nested.roots } : {}),
        };
      }
    }
    for (const candidate of kept.dropped) toRemove.add(candidate.path);
    if (toRemove.size > 0) {
      await git(["update-index", "-z", "--force-remove", "--stdin"], nulList([...toRemove]));
    }
    if (kept.add.length > 0) {
      // --replace: a file that took the place of a directory (or the reverse) replaces the old
      // entries even when git could not see them go (a symlink loop hides what was below it).
      const paths = kept.add.map((c) => c.path);
      await addToPlainIndex(ctx.location.root, paths, writeObjects, excluded);
    }
    const plainTree = (await writeObjects(["write-tree"])).stdout.toString("latin1").trim();
    const snapshotTree =
      nested.files.size > 0 ? await editTree(ctx.cat, ctx.writer, plainTree, nested.files) : plainTree;
    const fileCount = (await indexEntryCount(indexFile)) ?? 0;
    await writeState(ctx.paths.dir, {
      ghostignoreHash: ghostignore?.hash ?? null,
      files: fileCount,
      bytes: existingBytes + kept.add.reduce((total, c) => total + c.size, 0),
      indexTree: plainTree,
      // Seen by this run, or not looked for: status is tried again after the index is rewritten.
      ignoreFiles: listing.ignoreFiles === true,
    });
    return {
      tree: snapshotTree,
      parent: null,
      fileCount: fileCount + nested.files.size,
      excluded: sortExclusions(withoutIncludedDirs(excluded, includes)),
      included: [...forced].filter((rel) => nested.files.has(rel) || kept.add.some((c) => c.path === rel)),
      ...(nested.roots.length > 0 ? { nested: nested.roots } : {}),
    };
  });
}
