import path from "node:path";
import { runGit } from "../git/exec.js";
import { LooseObjectWriter } from "../git/loose-objects.js";
import { MODE, serializeTree } from "../git/objects.js";
import type { StoreContext } from "../store/context.js";
import type { NewRecord } from "./journal.js";
import type { TurnState } from "./model.js";

/**
 * In the repo store a turn's progress marks are trees in your repository that no snapshot names
 * until the turn ends: ghostcommit's own gc keeps an open turn's marks, but your `git gc
 * --prune=now` would not, and the turn's work would then read as not the agent's (each mark says
 * what a tool call left; a later one does not replace an earlier one's word). So the open turn's
 * marks are named by a ref of its session (`refs/ghostcommit/<key>/marks/<session>`): a tree
 * holding each of them, dropped when the turn ends. The shadow store's own gc is the only one
 * that prunes its objects.
 */
export async function holdMarks(
  engine: StoreContext,
  journalFile: string,
  turn: TurnState,
  mark: NewRecord,
): Promise<void> {
  if (engine.refs.kind !== "repo" || mark.e !== "mark") return;
  const distinct = [...new Set([...turn.marks.map((m) => m.tree), mark.tree])];
  const entries = distinct.map((oid, i) => ({ mode: MODE.tree, name: String(i).padStart(6, "0"), oid }));
  const holder = await new LooseObjectWriter(engine.refs.objectsDir).write("tree", serializeTree(entries));
  await runGit(["update-ref", markRef(engine, journalFile), holder], gitIn(engine));
}

/** Drops the session's marks ref (its turn ended: its after-snapshot holds what the marks did). */
export async function releaseMarks(
  engine: StoreContext,
  journalFile: string,
  turn: TurnState,
): Promise<void> {
  if (engine.refs.kind !== "repo" || turn.marks.length === 0) return;
  await runGit(["update-ref", "-d", markRef(engine, journalFile)], gitIn(engine)).catch(() => {});
}

function markRef(engine: StoreContext, journalFile: string): string {
  return `${engine.refs.refPrefix.replace(/snapshots\/$/, "marks/")}${path.basename(journalFile, ".jsonl")}`;
}

function gitIn(engine: StoreContext) {
  return { cwd: engine.root, env: { GIT_DIR: engine.refs.refsGitDir } };
}
