import { HashCache } from "../capture/hash-cache.js";
import { capturedIncludes } from "../capture/includes.js";
import { ghostignoreJudge } from "../capture/ghostignore-dirs.js";
import { captureWorktreePath } from "../capture/read-worktree.js";
import { captureTree } from "../capture/snapshot.js";
import { commitTree, commitTreeFrom, editTree, type FileState, type TreeChanges } from "../git/trees.js";
import type { StoreContext } from "../store/context.js";
import type { CatFile } from "../git/cat-file.js";
import { LooseObjectWriter } from "../git/loose-objects.js";
import { lstatSync } from "node:fs";
import { fsPath, type RelPath, resolveInside } from "../paths.js";
import type { SessionContext } from "./context.js";
import type { Journal, NewRecord } from "./journal.js";
import { EMPTY_TREE } from "../git/objects.js";
import { openTurnOf, type SessionState, type TurnState } from "./model.js";
import { reopenForContinuation, workingTurnOf } from "./continuation.js";
import { sameState, TreeLookup } from "../git/tree-lookup.js";
import { nowMicros } from "../store/metadata.js";
import { holdMarks } from "./mark-refs.js";
import {
  lastWriterOf,
  namedByCutOffCall,
  rewrittenByToolHooks,
  seenChangedByNoTool,
} from "./writer-marks.js";

/**
 * A progress mark after a tool call of the open turn: a tree of what the agent had done by then.
 * An edit tool names its paths, so only they are read into the previous mark; a shell tool's
 * effects are unknown, so the whole workspace is captured. Nothing happens without an open turn,
 * unless the agent's call continues the latest one (`continuing`: see `reopenForContinuation`).
 */
export async function markProgress(
  ctx: SessionContext,
  given?: string[],
  options: { continuing?: boolean; unwritten?: boolean; hooksBeside?: boolean } = {},
): Promise<void> {
  const { engine, journal } = ctx;
  engine.assertEnabled();
  const rels =
    given && [...new Set(given.map((g) => resolveInside(engine.root, ctx.cwd, g)))].filter(Boolean);
  await journal.locked(async () => {
    const state = await journal.load();
    const reopened =
      !openTurnOf(state) && options.continuing ? await reopenForContinuation(engine, state) : null;
    const open = workingTurnOf(state);
    if (!open) return markUnbegun(journal, state, rels);
    const mark = await progressMark(engine, state, open, rels, options);
    await journal.append([...(reopened ? [reopened] : []), mark]);
    await holdMarks(engine, journal.file, open, mark);
  });
}

/**
 * The mark of what the open turn holds now (see `markProgress`): all of it, or `rels` read into
 * the previous mark. `unwritten`: the call that named `rels` wrote nothing (it failed, or has not
 * run yet), so the mark keeps when each file was last written, to tell a hook's rewrite beside
 * the agent's edit from a person's. `hooksBeside`: other hooks ran after the call (see
 * `rewrittenByToolHooks`).
 */
export async function progressMark(
  engine: StoreContext,
  state: SessionState,
  open: TurnState,
  rels: RelPath[] | undefined,
  how: { unwritten?: boolean; hooksBeside?: boolean } = {},
): Promise<NewRecord> {
  const mark = await engine.withReader(async (cat) => {
    const full = async () => ({ tree: (await captureTree(engine, cat, [...state.touched])).tree });
    if (!rels) return full();
    // A mark whose objects a gc pruned cannot be edited: start again from the whole workspace.
    const edited = await editedMark(engine, cat, open, rels).catch(() => null);
    if (!edited) return full();
    if (!how.unwritten) return { tree: edited, paths: rels };
    const mtimes = rels.map(
      (rel) => lstatSync(fsPath(engine.root, rel), { throwIfNoEntry: false })?.mtimeMs ?? -1,
    );
    return { tree: edited, paths: rels, unwritten: true as const, mtimes };
  });
  return { e: "mark", turn: open.turn, ...mark, ...(how.hooksBeside ? { hooksBeside: true as const } : {}) };
}

/** The previous mark (or the before-state) with `rels` read from the work tree. */
async function editedMark(
  engine: StoreContext,
  cat: CatFile,
  open: TurnState,
  rels: RelPath[],
): Promise<string> {
  cat.preferLoose(engine.refs.objectsDir);
  const base = open.progress ?? (await commitTree(cat, open.before));
  const writer = new LooseObjectWriter(engine.refs.objectsDir);
  const cache = new HashCache(engine.paths.dir);
  await cache.load();
  const changes: TreeChanges = new Map();
  const included = await capturedIncludes(engine, rels);
  const ghostignored = await ghostignoreJudge(engine.location, engine.paths.dir, included);
  for (const rel of included) {
    if (ghostignored(rel)) continue; // never captured, not even into a mark
    const read = await captureWorktreePath(engine.root, rel, writer, cache, engine.settings.largeFileBytes);
    if (read.kind === "file") changes.set(rel, read.state);
    else if (read.kind === "absent") changes.set(rel, null);
  }
  return editTree(cat, writer, base, changes);
}

/**
 * What may not be the agent's among what an ending turn changed (`diff`). `sinceProgress`: after
 * an interrupt, whatever changed since the last mark; otherwise only touched paths' (a few), in
 * case another session's turn ran meanwhile. `noToolAfterInterrupt`: of those after an interrupt,
 * no tool call's changes. `unmarked`: under hooks that mark after every tool call, what changed
 * after the last call that could have changed it.
 */
export async function endingDoubts(
  cat: CatFile,
  turn: TurnState,
  state: SessionState,
  trees: { before: string; after: string },
  diff: { path: RelPath }[],
  how: { interrupted?: boolean; everyToolMarked?: boolean; root: string },
): Promise<{ sinceProgress: RelPath[]; noToolAfterInterrupt: RelPath[]; unmarked: RelPath[] }> {
  const changed = diff.map((c) => c.path);
  if (how.interrupted) {
    const { uncertain, afterLastTool } = await interruptedDoubts(cat, turn, trees, changed, how.root);
    return { sinceProgress: uncertain, noToolAfterInterrupt: afterLastTool, unmarked: [] };
  }
  const marked = turn.marks.some((m) => !m.unwritten);
  const touched = marked ? changed.filter((p) => turn.touched.has(p)) : [];
  return {
    sinceProgress: await changedSinceLastWriter(cat, turn, trees, touched),
    noToolAfterInterrupt: [],
    unmarked: how.everyToolMarked ? await changedAfterLastTool(cat, turn, state, trees, diff, how.root) : [],
  };
}

/**
 * Of `paths` (changed by a turn no stop event ended: interrupted, or its conversation ended), those
 * in doubt: changed since its last progress mark, or seen changed by no tool call (see
 * `seenChangedByNoTool`). `afterLastTool`: of those, the ones no call cut off by the interrupt had
 * named, whose change is no tool call's; a named one's bytes may be that call's.
 */
export async function interruptedDoubts(
  cat: CatFile,
  turn: TurnState,
  trees: { before: string; after: string },
  paths: RelPath[],
  root: string,
): Promise<{ uncertain: RelPath[]; afterLastTool: RelPath[] }> {
  const now = nowMicros();
  const since = (await changedSinceLastWriter(cat, turn, trees, paths)).filter(
    (p) => !rewrittenByToolHooks(root, turn, p, now),
  );
  const uncertain = [...new Set([...since, ...(await seenChangedByNoTool(cat, turn, trees.before, paths))])];
  // The last mark after a call that may have written: an edit announced after it was cut off.
  const inFlight = namedByCutOffCall(turn);
  return { uncertain, afterLastTool: uncertain.filter((p) => !inFlight(p)) };
}

/**
 * Of `paths` (changed by a turn, reported by none of its tool calls), those already as they ended
 * at a progress mark taken before another session's turn began beside it (`overlapFrom`): a
 * change made while the turn ran alone is its own, whatever happened beside it later.
 */
export async function settledBefore(
  cat: CatFile,
  turn: TurnState,
  overlapFrom: number,
  afterTree: string,
  paths: RelPath[],
): Promise<Set<RelPath>> {
  const mark = turn.marks.filter((m) => m.t < overlapFrom).at(-1);
  const settled = new Set<RelPath>();
  if (!mark || paths.length === 0) return settled;
  const lookup = new TreeLookup(cat);
  try {
    for (const p of paths) {
      if (sameState(await lookup.file(mark.tree, p), await lookup.file(afterTree, p))) settled.add(p);
    }
  } catch {
    return new Set(); // the mark's objects are gone: nothing is proven
  }
  return settled;
}

/**
 * Of `paths` (changed by a turn, reported by none of its tool calls), those every turn of another
 * session beside it left as they were when this turn began: each of those turns has ended, and
 * its after-snapshot holds the path as this turn's before-snapshot does. The change came after
 * they all ended, while this turn ran alone. Empty while one of them is still open.
 */
export async function changedAfterOthersEnded(
  engine: StoreContext,
  cat: CatFile,
  beside: TurnState[],
  beforeTree: string,
  paths: RelPath[],
): Promise<Set<RelPath>> {
  const proven = new Set<RelPath>();
  if (paths.length === 0 || beside.some((turn) => !turn.after)) return proven;
  const lookup = new TreeLookup(cat);
  try {
    const afterTrees = await Promise.all(
      beside.map((turn) => commitTreeFrom(engine.refs.objectsDir, cat, turn.after!)),
    );
    for (const p of paths) {
      const before = await lookup.file(beforeTree, p);
      if (await everySame(afterTrees, (tree) => lookup.file(tree, p), before)) proven.add(p);
    }
  } catch {
    return new Set(); // an after-snapshot's objects are gone: nothing is proven
  }
  return proven;
}

async function everySame<T>(
  items: T[],
  stateOf: (item: T) => Promise<FileState | null>,
  want: FileState | null,
) {
  for (const item of items) if (!sameState(await stateOf(item), want)) return false;
  return true;
}

/**
 * Of a turn that ended with its stop event, under hooks that mark after every tool call that can
 * change files (failed ones included): its changed paths that changed after the last tool call
 * that could have changed them. Either no tool call named them (an edit announced or reported; an
 * edit tool's mark holds only its own paths), so what they show since the last mark (since the
 * turn began, with none) is no tool's; or every call that named one was followed by a mark that
 * read it, and it changed after the last such mark: a person's edit while the agent wrote its
 * answer. A path named by the last call, which sent no mark after it (cut off half-way), stays the
 * agent's: its last bytes may be that call's; one named by an earlier call that sent none (denied,
 * or blocked by another hook: it never ran) is judged by the mark before it. What the session's
 * own rewind or redo changed during the turn (asked for from the chat) is the turn's work.
 */
export async function changedAfterLastTool(
  cat: CatFile,
  turn: TurnState,
  state: SessionState,
  trees: { before: string; after: string },
  diff: { path: RelPath }[],
  root: string,
): Promise<RelPath[]> {
  const undone = new Set<RelPath>();
  for (const undo of state.undos) if (undo.t >= turn.startedAt) for (const p of undo.paths) undone.add(p);
  const changed = diff.map((c) => c.path).filter((p) => !undone.has(p));
  // A call cut off at the stop (no mark of a writing call came after it) may have written its paths.
  const inFlight = namedByCutOffCall(turn);
  const now = nowMicros();
  const candidates = changed.filter((p) => !inFlight(p));
  const late = (await changedSinceLastWriter(cat, turn, trees, candidates)).filter(
    (p) => !rewrittenByToolHooks(root, turn, p, now),
  );
  return [...new Set([...late, ...(await seenChangedByNoTool(cat, turn, trees.before, changed))])];
}

/**
 * Of `paths`, those whose state at the turn's end differs from the last mark that read them after
 * a tool call that may have written them (the before-state without one): changed after the
 * agent's last known action on them. A mark taken just before an edit, or after one that failed,
 * is no such call: what it read (a person's edit made just before it) is not the agent's.
 */
export async function changedSinceLastWriter(
  cat: CatFile,
  turn: TurnState,
  trees: { before: string; after: string },
  paths: RelPath[],
): Promise<RelPath[]> {
  const lookup = new TreeLookup(cat);
  const out: RelPath[] = [];
  for (const p of paths) {
    const writer = lastWriterOf(turn, p);
    const base = await lookup.file(writer?.tree ?? trees.before, p).catch(() => undefined);
    // The mark's objects are gone: everything since the start is uncertain.
    const reference = base === undefined ? await lookup.file(trees.before, p) : base;
    if (!sameState(reference, await lookup.file(trees.after, p))) out.push(p);
  }
  return out;
}

/**
 * A tool call of a prompt whose turn never began (see `promptArrived`): when it finished, for
 * another session's turn beside it (a file both touched is settled by it). There is no turn to
 * read its files into: the mark holds the empty tree, which nothing reads.
 */
async function markUnbegun(
  journal: Journal,
  state: SessionState,
  rels: RelPath[] | undefined,
): Promise<void> {
  const prompt = state.unbegun;
  if (!prompt || prompt.abandonedAt !== undefined) return;
  await journal.append([
    { e: "mark", turn: prompt.turn, tree: EMPTY_TREE, ...(rels ? { paths: rels } : {}) },
  ]);
}
