import ignore, { type Ignore } from "ignore";
import { entryAt } from "../capture/tree-edit.js";
import type { CatFile } from "../git/cat-file.js";
import { ancestorsOf, type RelPath } from "../paths.js";

/**
 * Answers "was this path ignored when the target snapshot was taken?" for deletion candidates.
 * A candidate is in the current capture set, so it is not ignored under today's rules; only when
 * a `.gitignore` on its way changed since the target do the target's own rules need reading.
 */
export async function ignoredAtTarget(
  cat: CatFile,
  targetTree: string,
  candidates: RelPath[],
  changedPaths: ReadonlySet<RelPath>,
): Promise<Set<RelPath>> {
  const changedIgnoreDirs = new Set<RelPath>();
  for (const path of changedPaths) {
    if (path === ".gitignore") changedIgnoreDirs.add("");
    else if (path.endsWith("/.gitignore")) changedIgnoreDirs.add(path.slice(0, -"/.gitignore".length));
  }
  const ignored = new Set<RelPath>();
  if (changedIgnoreDirs.size === 0) return ignored;
  const matchers = new Map<RelPath, Ignore | null>();
  const matcherFor = async (dir: RelPath): Promise<Ignore | null> => {
    if (matchers.has(dir)) return matchers.get(dir)!;
    const entry = await entryAt(cat, targetTree, dir === "" ? ".gitignore" : `${dir}/.gitignore`);
    let matcher: Ignore | null = null;
    if (entry) {
      const blob = await cat.read(entry.oid);
      if (blob) matcher = ignore({ allowRelativePaths: true }).add(blob.content.toString("utf8"));
    }
    matchers.set(dir, matcher);
    return matcher;
  };
  for (const path of candidates) {
    const levels = ["", ...ancestorsOf(path)];
    if (!levels.some((dir) => changedIgnoreDirs.has(dir))) continue;
    let verdict = false;
    for (const dir of levels) {
      const matcher = await matcherFor(dir);
      if (!matcher) continue;
      const relative = dir === "" ? path : path.slice(dir.length + 1);
      try {
        const result = matcher.test(relative);
        if (result.ignored) verdict = true;
        else if (result.unignored) verdict = false;
        // A directory pattern ("build/") matches the files below it.
        for (const sub of ancestorsOf(relative)) {
          if (matcher.ignores(`${sub}/`)) verdict = true;
        }
      } catch {
        // unmatchable name: no verdict from this level
      }
    }
    if (verdict) ignored.add(path);
  }
  return ignored;
}
