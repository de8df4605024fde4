import path from "node:path";
import { EMPTY_BLOB, MODE } from "../git/objects.js";
import { isWithin, type RelPath } from "../paths.js";
import type { StoredExclusion } from "../store/metadata.js";
import { readHead } from "../git/repository.js";
import { SharedIndexWalk } from "../git/index-walk.js";
import { baseInfo } from "./base-info.js";
import {
  changedAttributesConvert,
  isAttributesFile,
  readUserGitConfig,
  statusCanStartBeforeConfig,
  userGitConverts,
} from "./conversion.js";
import type { CaptureContext, Captured } from "./context.js";
import { ghostignoreBeforeStatus, rulesAround, withCurrentGhostignores } from "./ghostignore-dirs.js";
import { captureNestedRepos, nestedReposToCapture, submoduleHead } from "./nested-repos.js";
import { expandIncludes, splitByRepository } from "./includes.js";
import { classifyUntracked, dependencyDirOf, ghostignoreMatch, largeDirCandidates } from "./policy.js";
import { dataDirWithin, sortExclusions, withoutIncludedDirs } from "./policy.js";
import { type PendingRead, readPending } from "./pending-reads.js";
import { syncExcludes } from "./status-gitdir.js";
import { runStatus } from "./status-run.js";
import { EarlyProof, unprovenCleanFiles } from "./clean-proof.js";
import { commitTree, editTree, entryAt, type FileState, subtreeAt, type TreeChanges } from "../git/trees.js";
import { signal } from "../util/settled.js";
import { outsideRecord, readOutsideRules } from "./outside-rules.js";
import { leaveOutUnreadable } from "./unreadable.js";
import { trace } from "../util/trace.js";

/**
 * Captures a workspace inside a git work tree. One `git status` against the user's own index
 * (read-only, stat-cached) says what differs from HEAD; only those paths are read, and the new
 * tree is HEAD's tree edited along the changed paths. The user's index is never written.
 */
export async function captureGit(ctx: CaptureContext, includes: RelPath[]): Promise<Captured> {
  const { location, paths, settings } = ctx;
  const worktreeRoot = location.worktreeRoot!;
  const prefix = location.prefix;
  trace("capture: start");
  // Where status needs no value from it, the config is read once status is running (spawning
  // its git process would hold this thread for milliseconds first).
  const configFirst = statusCanStartBeforeConfig(location) ? null : readUserGitConfig(location, paths.dir);
  configFirst?.catch(() => {}); // awaited below; an error meanwhile must not go unhandled
  const [head, statusConfig] = await Promise.all([
    readHead(location),
    configFirst ?? { excludesFile: null, ignoreCase: false },
  ]);
  trace("capture: head and excludes read");
  // Status (the long pole) starts as soon as HEAD is known; the base tree is read meanwhile, once
  // status is running (starting cat-file blocks this thread for milliseconds).
  const spawned = signal();
  const statusPromise = syncExcludes(location.commonDir!, paths.gitDir).then(() =>
    runStatus(ctx, head, worktreeRoot, prefix, statusConfig, { spawned: spawned.resolve }),
  );
  const userIndex = new SharedIndexWalk(path.join(location.gitDir!, "index"));
  await Promise.race([spawned.promise, statusPromise.catch(() => {})]);
  // The clean proof of a first snapshot starts beside status (see EarlyProof): the root's
  // .gitattributes on disk usually tells at once, the committed attributes and the user's config
  // a little later, those deeper down once the index walk lists them.
  const earlyProof = new EarlyProof(paths, ctx.readEnv, userIndex);
  earlyProof.startWhen(changedAttributesConvert(worktreeRoot, [".gitattributes"], null));
  const userConfig = await (configFirst ?? readUserGitConfig(location, paths.dir));
  const [rootTree, ghostignoreFirst] = await Promise.all([
    head ? commitTree(ctx.cat, head) : Promise.resolve(null),
    ghostignoreBeforeStatus(location, paths.dir, userConfig.ignoreCase),
  ]);
  const baseTree = await subtreeAt(ctx.cat, rootTree, prefix);
  // A failure here is the full check's below to report.
  earlyProof.startWhen(
    userGitConverts(location, ctx.cat, rootTree, prefix === "" ? [".gitattributes"] : [], userConfig),
  );
  const baseIndex = { walk: userIndex, prefix };
  const baseInfoPromise = baseInfo(
    paths.dir,
    ctx.readEnv,
    baseTree,
    ghostignoreFirst.rules,
    false,
    baseIndex,
  );
  const [status, baseFirst, treeConversion] = await Promise.all([
    statusPromise,
    baseInfoPromise,
    baseInfoPromise
      .then((info) => userGitConverts(location, ctx.cat, rootTree, info.attributeFiles, userConfig))
      .then((converts) => earlyProof.startIf(converts)),
  ]);
  await earlyProof.checksSettled(); // done by now: they ask less than the full check just made
  const strip = prefix === "" ? (p: RelPath) => p : (p: RelPath) => p.slice(prefix.length + 1);
  // The `.ghostignore` files below the root as they are now: in HEAD's tree, or new since (status).
  const seen = { entries: status.entries, strip, tracked: (info: typeof baseFirst) => info.ghostignoreFiles };
  const {
    ghostignore,
    base,
    dirs: ghostignoreDirs,
  } = await withCurrentGhostignores(ctx, userConfig.ignoreCase, seen, {
    ...ghostignoreFirst,
    base: baseFirst,
    again: (rules) => baseInfo(paths.dir, ctx.readEnv, baseTree, rules, false, baseIndex),
  });

  const changes: TreeChanges = new Map();
  const inBase = new Map<RelPath, boolean>();
  const reads: PendingRead[] = [];
  const excluded: StoredExclusion[] = [];
  const untracked: RelPath[] = [];
  const stagedPaths: RelPath[] = [];
  const baseUnknown: RelPath[] = []; // whether HEAD holds them is looked up below
  const fromIndex = new Set<RelPath>();
  const matcher = ghostignore?.matcher ?? null;

  for (const entry of status.entries) {
    if (!isWithin(entry.path, prefix)) continue;
    const rel = strip(entry.path);
    if (entry.kind === "untracked") {
      untracked.push(rel);
      continue;
    }
    if (entry.kind === "ignored") continue;
    if (ghostignoreMatch(rel, matcher)) {
      changes.set(rel, null);
      continue;
    }
    if (entry.kind === "unmerged") {
      baseUnknown.push(rel); // not for "deleted by us"
      reads.push({ path: rel, limit: null, untracked: false });
      continue;
    }
    // The empty blob is also git's HEAD id for an intent-to-add entry deleted from disk.
    if (entry.headOid !== EMPTY_BLOB) inBase.set(rel, !/^0+$/.test(entry.headOid));
    stagedPaths.push(rel);
    if (entry.indexMode === MODE.gitlink && entry.y === "M") {
      // A submodule with another commit checked out than the index records: kept as that commit.
      const checkedOut = await submoduleHead(path.join(worktreeRoot, ...entry.path.split("/")));
      changes.set(rel, { mode: MODE.gitlink, oid: checkedOut ?? entry.indexOid });
      continue;
    }
    if (entry.y !== ".") {
      if (entry.y === "D") changes.set(rel, null);
      else reads.push({ path: rel, limit: null, untracked: false });
    } else if (entry.x === "D") {
      changes.set(rel, null);
    } else {
      // Staged, and git's stat cache calls the file its index blob: proven below where git converts content.
      changes.set(rel, { mode: entry.indexMode, oid: entry.indexOid });
      fromIndex.add(rel);
    }
  }

  // Whether the user's git converts content, with the attribute files status named as they are now.
  const statusPaths = [...reads.map((r) => r.path), ...changes.keys(), ...untracked];
  const conversion = await changedAttributesConvert(
    location.root,
    statusPaths.filter(isAttributesFile),
    treeConversion,
  );
  // The proof runs while the files status named are read: it needs git, that needs the disk.
  const toVerify = conversion
    ? unprovenCleanFiles({
        indexFile: status.indexFile,
        paths,
        readEnv: ctx.readEnv,
        worktreeRoot,
        conversion,
        early: earlyProof.started,
        userIndex,
      }).then(async (unproven) =>
        unproven === null
          ? ((await baseInfo(paths.dir, ctx.readEnv, baseTree, ghostignore, true)).names ?? [])
          : unproven.filter((p) => isWithin(p, prefix)).map(strip),
      )
    : null;
  toVerify?.catch(() => {}); // awaited below

  // Tracked files matched by .ghostignore are left out of every snapshot.
  for (const match of base.ghostignored) {
    excluded.push({ path: match, reason: "ignore-file", files: base.ghostignoredFiles[match] });
    changes.set(match, null);
  }

  const trackedDirs = new Set<RelPath>();
  const dependencyDirs = new Set(settings.dependencyDirs);
  // Only files no structural rule excludes count toward a large directory (and cost time here).
  const countable = untracked.filter((p) => !p.endsWith("/") && dependencyDirOf(p, dependencyDirs) === null);
  for (const dir of largeDirCandidates(countable, settings.largeDirFiles)) {
    if ((await subtreeAt(ctx.cat, baseTree, dir)) || stagedPaths.some((p) => p.startsWith(`${dir}/`)))
      trackedDirs.add(dir);
  }
  const dependencyDirFiles = new Map([...status.dependencyDirFiles].map(([d, n]) => [strip(d), n] as const));
  const policy = classifyUntracked({
    untracked,
    dataDir: dataDirWithin(location.root),
    dependencyDirFiles,
    dependencyDirs,
    largeDirFiles: settings.largeDirFiles,
    ghostignore: matcher,
    isTrackedDir: (dir) => trackedDirs.has(dir),
  });
  // Nested repositories and submodules, when the config opts in: each by its own rules.
  const nestedRoots = await nestedReposToCapture(ctx, policy.excluded);
  const forced = splitByRepository(location.root, await expandIncludes(location.root, includes)); // touched in them too
  const nested = await captureNestedRepos(ctx, nestedRoots, matcher, forced.inRepos);
  excluded.push(...policy.excluded.filter((e) => !nestedRoots.includes(e.path)), ...nested.excluded);
  for (const dir of status.unreadableDirs.filter((d) => isWithin(d, prefix)))
    excluded.push({ path: strip(dir), reason: "unreadable" });
  // Their files in place of a submodule's gitlink: also the one status listed (checked out at
  // another commit than recorded), whose inBase status already gave.
  for (const root of nested.roots) {
    if (!inBase.has(root)) inBase.set(root, (await entryInBase(ctx, baseTree, root)) !== null);
    changes.set(root, null);
  }
  for (const [rel, state] of nested.files) changes.set(rel, state);
  for (const rel of policy.capture)
    reads.push({ path: rel, limit: settings.largeFileBytes, untracked: true });

  // Force-included and touched paths: captured even if ignored, still bounded by size.
  const included: RelPath[] = [];
  const alreadyRead = new Set(reads.map((r) => r.path));
  const around = await rulesAround(location, userConfig.ignoreCase, ghostignoreDirs, forced.outside);
  const forcedMatcher = around?.matcher ?? matcher;
  for (const rel of forced.outside) {
    if (alreadyRead.has(rel) || ghostignoreMatch(rel, forcedMatcher)) continue;
    included.push(rel);
    reads.push({ path: rel, limit: settings.largeFileBytes, untracked: true });
  }

  trace(`capture: status parsed, ${reads.length} files to read`);
  const capturedIncludes = new Set<RelPath>();
  const absentIncludes = new Set<RelPath>();
  const readAll = (batch: PendingRead[]) =>
    readPending(ctx, batch, { changes, excluded, included, capturedIncludes, absentIncludes });
  await readAll(reads);
  if (toVerify) {
    // Where the user's git converts content, its "unchanged" does not always mean "same bytes":
    // the files that cannot be proven identical cheaply are read (through ghostcommit's stat cache).
    const unproven = await toVerify;
    trace(`capture: ${unproven.length} tracked files to verify for content conversion`);
    const seen = new Set([...statusPaths, ...reads.map((r) => r.path)].filter((p) => !fromIndex.has(p)));
    const verify: PendingRead[] = [];
    for (const rel of unproven) {
      if (seen.has(rel) || ghostignoreMatch(rel, matcher)) continue;
      if (!inBase.has(rel)) inBase.set(rel, true);
      verify.push({ path: rel, limit: null, untracked: false, verifyOnly: true });
    }
    await readAll(verify);
  }

  // Included paths that are tracked and unchanged are already in the base.
  for (const rel of [...capturedIncludes, ...baseUnknown, ...stagedPaths]) {
    if (!inBase.has(rel)) inBase.set(rel, (await entryInBase(ctx, baseTree, rel)) !== null);
  }

  trace("capture: files read");
  const unreadable = status.unreadableDirs.filter((d) => isWithin(d, prefix)).map(strip);
  const unlisted = await leaveOutUnreadable(ctx.cat, baseTree, unreadable, changes, inBase);
  const tree = await editTree(ctx.cat, ctx.writer, baseTree, changes);
  trace("capture: tree built");
  let fileCount = base.fileCount;
  for (const [rel, state] of changes) {
    const wasThere = inBase.get(rel) ?? false;
    if (state && !wasThere) fileCount++;
    if (!state && wasThere) fileCount--;
  }
  for (const match of base.ghostignored) fileCount -= base.ghostignoredFiles[match];
  fileCount -= unlisted;
  return {
    tree,
    parent: head,
    fileCount: Math.max(0, fileCount),
    excluded: sortExclusions(withoutIncludedDirs(excluded, includes, capturedIncludes)),
    included: [...capturedIncludes, ...absentIncludes].sort(),
    ...(nested.roots.length > 0 ? { nested: nested.roots } : {}),
    outside: outsideRecord(readOutsideRules(location, userConfig.excludesFile, userConfig.ignoreCase)),
    ...(status.copyDeferred ? { statusCopyDeferred: status.copyDeferred } : {}),
  };
}

async function entryInBase(
  ctx: CaptureContext,
  baseTree: string | null,
  rel: RelPath,
): Promise<FileState | null> {
  const entry = await entryAt(ctx.cat, baseTree, rel);
  return entry && entry.mode !== MODE.tree ? entry : null;
}
