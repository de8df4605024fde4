import { existsSync } from "node:fs";
import path from "node:path";
import { HashCache } from "../capture/hash-cache.js";
import { capturedIncludes, inOtherRepositories } from "../capture/includes.js";
import { captureWorktreePath } from "../capture/read-worktree.js";
import { editTree, type TreeChanges } from "../git/trees.js";
import type { StoreContext } from "../store/context.js";
import { GhostcommitError } from "../errors.js";
import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import { LooseObjectWriter } from "../git/loose-objects.js";
import { ancestorsOf, displayPath, fsPath, isWithin, type RelPath, resolveInside } from "../paths.js";
import type { TouchResult } from "../types.js";
import type { SessionContext } from "./context.js";
import { applyRecord, type JournalRecord, openTurnOf, type TurnState } from "./model.js";
import type { NewRecord } from "./journal.js";
import { progressMark } from "./progress.js";
import { promptSince, reopenForContinuation, workingTurnOf } from "./continuation.js";
import { readSnapshot, writeSnapshot } from "../store/snapshots.js";
import { sameState, TreeLookup } from "../git/tree-lookup.js";
import { leftOutBy, newNonce, nowMicros } from "../store/metadata.js";
import { overlappingTouches } from "./attribution.js";
import { journalsAround } from "./sessions-around.js";
import { type IgnoreJudge, ignoredAtSnapshot } from "./ignored-before.js";
import { ghostignoreJudge } from "../capture/ghostignore-dirs.js";
import { holdMarks } from "./mark-refs.js";

/**
 * The paths `touch` names, relative to the workspace; one outside it, or the workspace itself,
 * fails. Checked before the store is written (or made), so a bad path changes nothing.
 */
export function touchTargets(ctx: SessionContext, given: string[]): RelPath[] {
  if (given.length === 0) throw new GhostcommitError("usage", "touch needs at least one path");
  const rels = [...new Set(given.map((g) => resolveInside(ctx.engine.root, ctx.cwd, g)))];
  if (rels.includes("")) {
    throw new GhostcommitError(
      "usage",
      "touch names files or directories below the workspace, not the workspace itself",
    );
  }
  return rels;
}

/**
 * `touch`: marks paths as agent-touched. Every later snapshot of the session captures them even
 * if ignored (still bounded by the size limit). During an open turn they are attributed to it,
 * and a path its before snapshot did not look at (ignored or excluded then) has its current
 * content captured into the turn's before-state; a path the before snapshot captured, or proved
 * absent, keeps that state, unless another session's turn beside this one touched it and it
 * changed since: then its state now is this turn's starting point for it, so that rewinding this
 * turn leaves the other agent's work in place. With `edited` (reported after the edit, as Cursor
 * does) the current content is not the before-state: such paths are recorded as never captured
 * instead, so a rewind reports them as skipped rather than writing the edit back. `rels` come
 * from `touchTargets`. `mark`: also takes the tool call's progress mark of `rels` (see
 * `markProgress`), "before" the tool runs (it wrote nothing yet) or "after" it.
 */
export async function touchPaths(
  ctx: SessionContext,
  rels: RelPath[],
  options: { edited?: boolean; continuing?: boolean; mark?: "before" | "after"; hooksBeside?: boolean } = {},
): Promise<TouchResult> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  let outsideTurn = false;
  let unbegunPrompt = false;
  await journal.locked(async () => {
    const state = await journal.load();
    const reopened =
      !openTurnOf(state) && options.continuing ? await reopenForContinuation(engine, state) : null;
    const open = workingTurnOf(state);
    const files = await capturedIncludes(engine, rels);
    if (!open) {
      await journal.append([{ e: "touch", turn: null, paths: rels, files }]);
      outsideTurn = true;
      unbegunPrompt = promptSince(state, -1);
      return;
    }
    const fresh = files.filter(
      (f) => !open.touched.has(f) && !open.beforeAbsent.has(f) && !open.beforeUnknown.has(f),
    );
    const amended: { before?: string; absent?: RelPath[]; unknown?: RelPath[] } =
      fresh.length === 0
        ? { absent: [] }
        : options.edited
          ? { unknown: await unseenBefore(engine, open, fresh) }
          : await captureIntoBefore(engine, open, fresh, await touchedBeside(ctx, open, fresh));
    const touch: NewRecord = {
      e: "touch",
      turn: open.turn,
      paths: rels,
      files,
      ...amended,
      ...(options.edited ? { edited: true } : {}),
    };
    // The tool call's mark in the same step (one lock, one append), taken after the touch's
    // before-state amends, as `progress` right after would take it.
    const replacedBefore = open.before; // the fold below moves the turn to the amended one
    let mark: NewRecord[] = [];
    if (options.mark) {
      applyRecord(state, { ...touch, t: nowMicros() } as JournalRecord);
      const how = { unwritten: options.mark === "before", hooksBeside: options.hooksBeside };
      mark = [await progressMark(engine, state, workingTurnOf(state)!, rels, how)];
    }
    await journal.append([...(reopened ? [reopened] : []), touch, ...mark]);
    for (const m of mark) await holdMarks(engine, journal.file, workingTurnOf(state)!, m);
    // The replaced before-snapshot is now unreferenced by the journal: forget it.
    if (amended.before) await engine.refs.remove([replacedBefore]).catch(() => {});
  });
  const leftOut = inOtherRepositories(engine, rels).map(displayPath);
  // Kept out of every snapshot still (their rules win over a touch): said, so no one counts on a rewind.
  const judge = await ghostignoreJudge(engine.location, engine.paths.dir, rels);
  const ghostignored = rels.filter(judge).map(displayPath);
  return {
    touched: rels.map(displayPath),
    ...(leftOut.length > 0 ? { leftOut } : {}),
    ...(ghostignored.length > 0 ? { ghostignored } : {}),
    ...(outsideTurn ? { outsideTurn: true as const } : {}),
    ...(unbegunPrompt ? { unbegunPrompt: true as const } : {}),
  };
}

/** Of `paths`, those the turn's before snapshot did not look at. */
export async function unseenBefore(
  engine: StoreContext,
  open: TurnState,
  paths: RelPath[],
): Promise<RelPath[]> {
  return engine.withReader(async (cat) => {
    cat.preferLoose(engine.refs.objectsDir); // a few trees along the paths, often written loose
    const before = await readSnapshot(cat, open.before);
    return before ? unseenBy(engine, cat, before.tree, before.meta, paths) : paths;
  });
}

/** Of `paths`, those another session's turn beside the open one touched (or its rewind wrote). */
async function touchedBeside(ctx: SessionContext, open: TurnState, paths: RelPath[]): Promise<Set<RelPath>> {
  const { engine, journal } = ctx;
  const others = await journalsAround(engine, open.startedAt, journal.file);
  const touched = overlappingTouches(others, open.startedAt, nowMicros());
  return new Set(paths.filter((p) => touched.has(p)));
}

/**
 * Captures into a new before-snapshot the paths the turn's before snapshot did not look at, and
 * those of `besideTouched` (see `touchPaths`) that changed since it.
 */
async function captureIntoBefore(
  engine: StoreContext,
  open: TurnState,
  paths: RelPath[],
  besideTouched: ReadonlySet<RelPath>,
): Promise<{ before?: string; absent: RelPath[] }> {
  return engine.withReader(async (cat) => {
    cat.preferLoose(engine.refs.objectsDir); // a few trees along the paths, often written loose
    const before = await readSnapshot(cat, open.before);
    if (!before) return { absent: [] }; // expired: nothing to amend
    // `.ghostignore` keeps a path out of every snapshot, a touched one too: it stays excluded.
    const ghostignored = await ghostignoreJudge(engine.location, engine.paths.dir, paths);
    // A path missing now was missing before the edit either way: no need to ask git whether the
    // snapshot ignored it (a new file's Write would start a git process at every PreToolUse).
    const missing = (rel: RelPath) => !existsSync(fsPath(engine.root, rel));
    const unseen = (await unseenBy(engine, cat, before.tree, before.meta, paths, missing)).filter(
      (p) => !ghostignored(p),
    );
    const writer = new LooseObjectWriter(engine.refs.objectsDir);
    const cache = new HashCache(engine.paths.dir);
    await cache.load();
    const changes: TreeChanges = new Map();
    const absent: RelPath[] = [];
    for (const rel of unseen) {
      const read = await captureWorktreePath(engine.root, rel, writer, cache, engine.settings.largeFileBytes);
      if (read.kind === "file") changes.set(rel, read.state);
      else if (read.kind === "absent") absent.push(rel);
      // large, unreadable or special: still not captured, so a rewind leaves it alone
    }
    const lookup = new TreeLookup(cat);
    for (const rel of besideTouched) {
      if (unseen.includes(rel) || ghostignored(rel)) continue;
      const read = await captureWorktreePath(engine.root, rel, writer, cache, engine.settings.largeFileBytes);
      const now = read.kind === "file" ? read.state : read.kind === "absent" ? null : undefined;
      // large, unreadable or special now: the before-state stays (a rewind's check sees the rest)
      if (now !== undefined && !sameState(now, await lookup.file(before.tree, rel))) changes.set(rel, now);
    }
    if (changes.size === 0) return { absent };
    // The count `show` and `list` report follows the files added to or taken from the tree.
    let fileCount = before.meta.fileCount;
    for (const [rel, state] of changes) {
      const was = (await lookup.file(before.tree, rel)) !== null;
      if (state && !was) fileCount++;
      if (!state && was) fileCount--;
    }
    const tree = await editTree(cat, writer, before.tree, changes);
    const id = await writeSnapshot(engine, tree, {
      ...before.meta,
      fileCount: Math.max(0, fileCount),
      excluded: before.meta.excluded.filter((e) => !changes.has(e.path)),
      included: [
        ...new Set([...before.meta.included, ...[...changes].filter(([, state]) => state).map(([p]) => p)]),
      ].sort(),
      nonce: newNonce(),
    });
    return { before: id, absent };
  });
}

/**
 * Of `paths`, those the snapshot neither captured nor proved absent: excluded or ignored then.
 * `missingNow`: paths the caller takes as unseen without asking git whether they were ignored
 * (what the caller does with an unseen path comes to the same for them either way).
 */
export async function unseenBy(
  engine: StoreContext,
  cat: CatFile,
  tree: string,
  meta: { excluded: { path: RelPath }[]; included: RelPath[] },
  paths: RelPath[],
  missingNow?: (rel: RelPath) => boolean,
): Promise<RelPath[]> {
  const lookup = new TreeLookup(cat);
  const unseen: RelPath[] = [];
  const maybeIgnored: RelPath[] = [];
  for (const rel of paths) {
    if (meta.included.includes(rel) || (await lookup.entry(tree, rel))) continue;
    let underFile = false;
    for (const dir of ancestorsOf(rel)) {
      const entry = await lookup.entry(tree, dir);
      if (entry && entry.mode !== MODE.tree) underFile = true;
    }
    if (underFile) continue; // a file where its directory would be proves it absent
    if (leftOutBy(meta, rel) || missingNow?.(rel)) unseen.push(rel);
    else maybeIgnored.push(rel);
  }
  if (maybeIgnored.length === 0) return unseen;
  const { location } = engine;
  const judge = { excluded: meta.excluded.map((e) => e.path), scratch: engine.paths.dir };
  if (location.kind === "git") {
    // Judged from the work tree's root: the workspace may lie below it.
    const prefix = location.prefix;
    const top = (rel: RelPath) => (prefix === "" ? rel : `${prefix}/${rel}`);
    const inSnapshot = (rel: RelPath) =>
      prefix === "" ? rel : isWithin(rel, prefix) ? rel.slice(prefix.length + 1) : null;
    const ignored = await ignoredAtSnapshot(
      { ...judge, top: location.worktreeRoot!, gitDir: location.gitDir!, inSnapshot },
      cat,
      tree,
      maybeIgnored.map(top),
    );
    unseen.push(...ignored.map((rel) => inSnapshot(rel)!));
  } else unseen.push(...(await ignoredInHeldRepos(engine.root, cat, tree, judge, maybeIgnored)));
  return unseen;
}

/**
 * In a plain directory, the paths a repository it holds ignored at the snapshot (each by the
 * innermost repository above it, with that repository's rules, as its capture judged them).
 */
async function ignoredInHeldRepos(
  root: string,
  cat: CatFile,
  tree: string,
  judge: Pick<IgnoreJudge, "excluded" | "scratch">,
  paths: RelPath[],
): Promise<RelPath[]> {
  const byRepo = new Map<RelPath, RelPath[]>();
  for (const rel of paths) {
    const repo = ancestorsOf(rel)
      .reverse()
      .find((dir) => existsSync(fsPath(root, `${dir}/.git`)));
    if (repo !== undefined) byRepo.set(repo, [...(byRepo.get(repo) ?? []), rel.slice(repo.length + 1)]);
  }
  const ignored: RelPath[] = [];
  for (const [repo, inside] of byRepo) {
    const top = path.join(root, repo);
    const inSnapshot = (rel: RelPath) => `${repo}/${rel}`;
    const held = { ...judge, top, gitDir: path.join(top, ".git"), inSnapshot };
    for (const rel of await ignoredAtSnapshot(held, cat, tree, inside)) ignored.push(inSnapshot(rel));
  }
  return ignored;
}
