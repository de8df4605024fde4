import { GhostcommitError } from "../errors.js";
import type { CatFile } from "../git/cat-file.js";
import {
  DIFF_TREE,
  isAbsentMode,
  missingObject,
  parseRawDiff,
  parseStdinDiff,
  type RawChange,
} from "../git/diff-tree.js";
import { runGit } from "../git/exec.js";
import { MODE } from "../git/objects.js";
import type { FileState } from "../git/trees.js";
import type { RelPath } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import type { StoredSnapshot } from "../store/store.js";
import { rulesOfSnapshot } from "../capture/outside-rules.js";
import {
  belowUnknownGitignore,
  ghostignoredAtTarget,
  ignoredAtTarget,
  ignoreScope,
} from "./ignored-at-target.js";
import { namedOutsideCapture, selectNamed } from "./path-filter.js";
import { type PathChange, proveAbsent } from "./plan.js";
import { type RestoreResult, runRestore } from "./restore.js";

/**
 * Raw diff between two trees (proportional to what changed): by the `diff-tree` made ready for
 * this command (`prepareDiff`) where there is one.
 */
export async function diffTrees(engine: StoreContext, from: string, to: string): Promise<RawChange[]> {
  try {
    const ahead = engine.takeDiffAhead();
    if (ahead) {
      const { stdout, stderr } = await ahead.run(`${from} ${to}\n`);
      return parseStdinDiff(stdout, from, to, stderr);
    }
    const result = await runGit([...DIFF_TREE, from, to], { cwd: engine.paths.dir, env: engine.readEnv });
    return parseRawDiff(result.stdout);
  } catch (error) {
    throw (GhostcommitError.is(error, "git-failed") && missingObject(error.data.stderr ?? "")) || error;
  }
}

function stateOf(mode: string, oid: string): FileState | null {
  return isAbsentMode(mode) ? null : { mode, oid };
}

/** `restore ID`: make the capture set equal to the snapshot. */
export async function restoreSnapshot(
  engine: StoreContext,
  cat: CatFile,
  target: StoredSnapshot,
  dryRun: boolean,
  named?: RelPath[],
  signal?: AbortSignal,
): Promise<RestoreResult> {
  engine.prepareDiff(); // its target is the diff from what is there now
  return runRestore(engine, cat, {
    includes: target.meta.included,
    dryRun,
    safetyMessage: `before restoring ${target.id.slice(0, 12)}`,
    guards: target.id,
    signal,
    targetHead: target.meta.parent,
    target: async (currentTree, capturedRepos) => {
      const raw = await diffTrees(engine, currentTree, target.tree);
      const all: PathChange[] = raw.map((c) => ({
        path: c.path,
        current: stateOf(c.oldMode, c.oldOid),
        target: stateOf(c.newMode, c.newOid),
      }));
      const changes = selectNamed(all, named);
      // A gitlink (a repository nested there) is no file: it proves nothing about paths below it.
      const filesInTarget = new Set(
        changes.filter((c) => c.target && c.target.mode !== MODE.gitlink).map((c) => c.path),
      );
      const candidates = changes.filter((c) => c.current && !c.target).map((c) => c.path);
      const then = await rulesOfSnapshot(engine.location, engine.paths.dir, target.meta.outside);
      const ignored = await ignoredAtTarget(
        cat,
        target.tree,
        candidates,
        new Set(all.map((c) => c.path)),
        ignoreScope(engine.location.kind, target.meta.nested),
        ignoreScope(engine.location.kind, capturedRepos),
        then.ignoreCase,
        then.git,
      );
      // Nor was a repository there looked into (a submodule or nested repository not captured then).
      const reposInTarget = changes.filter((c) => c.target?.mode === MODE.gitlink).map((c) => c.path);
      // A repository captured now that the snapshot did not look into (made or cloned since): its
      // absence then proves nothing a person would want deleted, and its .git stays either way.
      const lookedInto = new Set(target.meta.nested ?? []);
      const reposSince = capturedRepos.filter((r) => !lookedInto.has(r));
      const excludedThen = target.meta.excluded.map((e) => e.path);
      const ghostignored = await ghostignoredAtTarget(
        cat,
        target.tree,
        excludedThen,
        then.ignoreCase,
        candidates,
        then.ghost,
      );
      const rulesUnknown = belowUnknownGitignore(excludedThen);
      const provenAbsent = proveAbsent(
        candidates,
        filesInTarget,
        [...excludedThen, ...reposInTarget, ...reposSince],
        (p) => ignored.has(p) || ghostignored(p) || rulesUnknown(p),
      );
      const outside = await namedOutsideCapture(named, cat, [target.tree, currentTree], engine.root, all);
      return { changes, provenAbsent, outside };
    },
  });
}
