import { checkIgnoreInput, checkIgnoreName } from "../git/check-ignore.js";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { MODE } from "../git/objects.js";
import type { CatFile } from "../git/cat-file.js";
import { TreeLookup } from "../git/tree-lookup.js";
import { ancestorsOf, fsPath, isWithin, type RelPath, relBytes, relFromBytes } from "../paths.js";

/** A repository whose rules judge paths, and where its work tree lies in a snapshot. */
export interface IgnoreJudge {
  /** The work tree's root (absolute). */
  top: string;
  gitDir: string;
  /** The snapshot path of a work-tree path, or null for one outside the workspace. */
  inSnapshot: (rel: RelPath) => RelPath | null;
  /** Where the snapshot kept paths out (too large, .ghostignore): its rules unknown. */
  excluded: readonly RelPath[];
  /** A scratch directory's parent. */
  scratch: string;
}

/**
 * Of `paths` (relative to `judge.top`), those the repository ignored when the snapshot `tree`
 * was taken. Today's rules answer unless a `.gitignore` on a path's way differs from the one the
 * snapshot holds: an earlier tool call of the same turn may have written it (ignoring a `.env` it
 * made), so those paths are judged again by git in a scratch work tree holding the snapshot's
 * `.gitignore` files, with the repository's `info/exclude` and `core.excludesFile` as today.
 */
export async function ignoredAtSnapshot(
  judge: IgnoreJudge,
  cat: CatFile,
  tree: string,
  paths: RelPath[],
): Promise<RelPath[]> {
  const lookup = new TreeLookup(cat);
  const levels = [...new Set(paths.flatMap((p) => ["", ...ancestorsOf(p)]))];
  const rulesNow = new Map(levels.map((dir) => [dir, readRules(judge.top, dir)]));
  const rulesThen = new Map<RelPath, Buffer | null>();
  const created: RelPath[] = []; // not in the snapshot, here now: made since, or ignored itself
  for (const dir of levels) {
    const now = rulesNow.get(dir) ?? null;
    const file = judge.inSnapshot(ruleFile(dir));
    if (file === null || judge.excluded.some((e) => isWithin(file, e))) {
      rulesThen.set(dir, now);
      continue;
    }
    const entry = await lookup.entry(tree, file);
    if (!entry) {
      rulesThen.set(dir, null);
      if (now) created.push(dir);
    } else if (entry.mode === MODE.file || entry.mode === MODE.exec) {
      rulesThen.set(dir, (await cat.read(entry.oid))?.content ?? now);
    } else rulesThen.set(dir, now); // git reads no rules through a link
  }
  const ignoredNow = await checkIgnore(judge.top, [...paths, ...created.map(ruleFile)]);
  // A .gitignore ignored now was never captured: its rules then are as unknown as its absence.
  for (const dir of created) if (ignoredNow.has(ruleFile(dir))) rulesThen.set(dir, rulesNow.get(dir) ?? null);
  const same = (dir: RelPath) => sameBytes(rulesThen.get(dir) ?? null, rulesNow.get(dir) ?? null);
  const changed = paths.filter((p) => !["", ...ancestorsOf(p)].every(same));
  const result = paths.filter((p) => ignoredNow.has(p) && !changed.includes(p));
  if (changed.length === 0) return result;
  let scratch: string | null = null;
  try {
    scratch = mkdtempSync(path.join(judge.scratch, "rules-"));
    for (const [dir, rules] of rulesThen) {
      if (!rules) continue;
      if (dir !== "") mkdirSync(fsPath(scratch, dir), { recursive: true });
      writeFileSync(fsPath(scratch, ruleFile(dir)), rules);
    }
    const ignoredThen = await checkIgnore(scratch, changed, judge.gitDir);
    return [...result, ...changed.filter((p) => ignoredThen.has(p))];
  } catch {
    // Rules then unreadable: not proved absent, so a rewind leaves these paths alone.
    return [...result, ...changed];
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

function ruleFile(dir: RelPath): RelPath {
  return dir === "" ? ".gitignore" : `${dir}/.gitignore`;
}

/** A directory's `.gitignore` now, or null (none, or not a file git reads). */
function readRules(top: string, dir: RelPath): Buffer | null {
  try {
    return readFileSync(fsPath(top, ruleFile(dir)));
  } catch {
    return null;
  }
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

/**
 * The paths git ignores (read-only `check-ignore` of the work tree at `top`, or, with `gitDir`,
 * of that repository's rules over a scratch work tree).
 */
async function checkIgnore(top: string, paths: RelPath[], gitDir?: string): Promise<Set<RelPath>> {
  const input = checkIgnoreInput(paths.map(relBytes));
  const result = await runGit(["check-ignore", "-z", "--stdin", "--no-index"], {
    cwd: top,
    env: { GIT_LITERAL_PATHSPECS: "0", ...(gitDir ? { GIT_DIR: gitDir, GIT_WORK_TREE: top } : {}) },
    input,
    okCodes: [0, 1],
  });
  return new Set(splitNul(result.stdout).map((b) => relFromBytes(checkIgnoreName(b))));
}
