import path from "node:path";
import { runGit } from "../git/exec.js";
import type { StoreContext } from "../store/context.js";

/**
 * In the repo store a turn's progress marks are trees in your repository that no snapshot names
 * until the turn ends: ghostcommit's own gc keeps an open turn's last one, but your `git gc
 * --prune=now` would not, and after an interrupt the turn's work would then read as not the
 * agent's. So the open turn's latest mark is named by a ref of its session
 * (`refs/ghostcommit/<key>/marks/<session>`), dropped when the turn ends. The shadow store's own
 * gc is the only one that prunes its objects.
 */
export async function holdMark(engine: StoreContext, journalFile: string, tree: string): Promise<void> {
  if (engine.refs.kind !== "repo") return;
  await markRefUpdate(engine, journalFile, [tree]);
}

/** Drops the session's mark ref (its turn ended: its after-snapshot holds what the marks did). */
export async function releaseMark(engine: StoreContext, journalFile: string): Promise<void> {
  if (engine.refs.kind !== "repo") return;
  await markRefUpdate(engine, journalFile, ["-d"]).catch(() => {});
}

async function markRefUpdate(engine: StoreContext, journalFile: string, args: string[]): Promise<void> {
  const ref = `${engine.refs.refPrefix.replace(/snapshots\/$/, "marks/")}${path.basename(journalFile, ".jsonl")}`;
  const [first, ...rest] = args;
  const argv = first === "-d" ? ["update-ref", "-d", ref] : ["update-ref", ref, first, ...rest];
  await runGit(argv, { cwd: engine.root, env: { GIT_DIR: engine.refs.refsGitDir } });
}
