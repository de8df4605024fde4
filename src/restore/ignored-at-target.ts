import type { Ignore } from "ignore";
import { depth, GHOSTIGNORE, ignoreMatcher, layeredRules } from "../capture/ghostignore.js";
import { ghostignoreMatch } from "../capture/policy.js";
import { entryAt } from "../git/trees.js";
import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import type { RuleLevel } from "../store/metadata.js";
import { ancestorsOf, isWithin, type RelPath } from "../paths.js";

/**
 * Answers "did the target snapshot's own `.ghostignore` files keep this path out?" for the
 * deletion candidates (the files on the way to each, as git reads `.gitignore` files). Today's
 * rules only say what may be touched now: a file made since under other rules (a `.ghostignore`
 * removed or changed) would be matched by the target's and was never captured then, so the
 * snapshot proves nothing about it. A `.ghostignore` the target left out (excluded, or a symlink)
 * has rules no one can read back: then it proves nothing about any path below it. `above`: the
 * rules of the `.ghostignore` files above a subdirectory's workspace then (nearest first), as its
 * snapshot recorded them; "unknown" where it kept only their hash and they changed since.
 */
export async function ghostignoredAtTarget(
  cat: CatFile,
  targetTree: string,
  excludedInTarget: readonly RelPath[],
  ignoreCase: () => Promise<boolean>,
  candidates: readonly RelPath[],
  above: RuleLevel[] | "unknown" = [],
): Promise<(path: RelPath) => boolean> {
  if (above === "unknown") return () => true;
  const dirs = new Set<RelPath>([""]);
  for (const p of candidates) for (const dir of ancestorsOf(p)) dirs.add(dir);
  const unreadable: RelPath[] = [];
  const levels: { dir: RelPath; prefix: string; rules: Ignore }[] = [];
  let caseless: boolean | undefined;
  for (const dir of dirs) {
    const file = dir === "" ? GHOSTIGNORE : `${dir}/${GHOSTIGNORE}`;
    if (excludedInTarget.some((excluded) => isWithin(file, excluded))) {
      unreadable.push(dir);
      continue;
    }
    const entry = await entryAt(cat, targetTree, file);
    if (!entry || entry.mode === MODE.tree || entry.mode === MODE.gitlink) continue;
    const blob = entry.mode === MODE.link ? null : await cat.read(entry.oid);
    if (!blob) {
      unreadable.push(dir);
      continue;
    }
    caseless ??= await ignoreCase();
    levels.push({ dir, prefix: "", rules: ignoreMatcher(blob.content.toString("utf8"), caseless) });
  }
  if (unreadable.includes("")) return () => true;
  if (above.length > 0) caseless ??= await ignoreCase();
  const aboveLevels = above.map((l) => ({
    dir: "",
    prefix: l.prefix,
    rules: ignoreMatcher(l.text, caseless!),
  }));
  const matcher = layeredRules([...levels.sort((a, b) => depth(b.dir) - depth(a.dir)), ...aboveLevels]);
  return (path) => unreadable.some((dir) => isWithin(path, dir)) || ghostignoreMatch(path, matcher) !== null;
}

/**
 * Answers "was this path ignored when the target snapshot was taken?" for deletion candidates.
 * A candidate is in the current capture set, so it is not ignored under today's rules; only when
 * a `.gitignore` on its way changed since the target, or its rules start elsewhere now (`scopeNow`:
 * a repository whose `.git` was removed, its `.gitignore` kept but no longer read), do the target's
 * own rules need reading, matched with or without regard to case as git matches them here (`ignoreCase`).
 */
export async function ignoredAtTarget(
  cat: CatFile,
  targetTree: string,
  candidates: RelPath[],
  changedPaths: ReadonlySet<RelPath>,
  scopeOf: (path: RelPath) => RelPath | null,
  scopeNow: (path: RelPath) => RelPath | null,
  ignoreCase: () => Promise<boolean>,
  outsideThen?: RuleLevel[] | "unknown",
): Promise<Set<RelPath>> {
  const changedIgnoreDirs = new Set<RelPath>();
  for (const path of changedPaths) {
    if (path === ".gitignore") changedIgnoreDirs.add("");
    else if (path.endsWith("/.gitignore")) changedIgnoreDirs.add(path.slice(0, -"/.gitignore".length));
  }
  const ignored = new Set<RelPath>();
  const rescoped = (path: RelPath) => scopeOf(path) !== null && scopeOf(path) !== scopeNow(path);
  // The rules outside the tree (info/exclude, core.excludesFile, the .gitignore files above the
  // workspace) changed since: the repository's own paths are judged by those it had then.
  const outsideChanged = (path: RelPath) => outsideThen !== undefined && scopeOf(path) === "";
  if (changedIgnoreDirs.size === 0 && !candidates.some((p) => rescoped(p) || outsideChanged(p)))
    return ignored;
  if (outsideThen === "unknown") for (const p of candidates) if (outsideChanged(p)) ignored.add(p);
  const ignorecase = await ignoreCase();
  const outside =
    outsideThen === undefined || outsideThen === "unknown"
      ? []
      : outsideThen.map((level) => ({ prefix: level.prefix, rules: ignoreMatcher(level.text, ignorecase) }));
  const matchers = new Map<RelPath, Ignore | null>();
  const matcherFor = async (dir: RelPath): Promise<Ignore | null> => {
    if (matchers.has(dir)) return matchers.get(dir)!;
    const entry = await entryAt(cat, targetTree, dir === "" ? ".gitignore" : `${dir}/.gitignore`);
    let matcher: Ignore | null = null;
    if (entry) {
      const blob = await cat.read(entry.oid);
      if (blob) matcher = ignoreMatcher(blob.content.toString("utf8"), ignorecase);
    }
    matchers.set(dir, matcher);
    return matcher;
  };
  /** Git's verdict from the rules of levels[0..upto]: the last matching pattern wins. */
  const lastMatch = async (levels: RelPath[], upto: number, target: RelPath, isDir: boolean) => {
    let verdict = false;
    if (levels[0] === "") {
      for (const { prefix, rules } of outside) {
        const said = testRules(rules, `${prefix}${target}`, isDir);
        if (said === true || said === false) verdict = said;
      }
    }
    for (let i = 0; i <= upto; i++) {
      const dir = levels[i];
      const matcher = await matcherFor(dir);
      if (!matcher) continue;
      const relative = dir === "" ? target : target.slice(dir.length + 1);
      const said = testRules(matcher, relative, isDir);
      if (said === true || said === false) verdict = said;
    }
    return verdict;
  };
  for (const path of candidates) {
    const scope = scopeOf(path);
    if (scope === null || ignored.has(path)) continue;
    const dirs = ancestorsOf(path).filter((dir) => scope === "" || dir.startsWith(`${scope}/`));
    const levels = [scope, ...dirs];
    if (!levels.some((dir) => changedIgnoreDirs.has(dir)) && !rescoped(path) && !outsideChanged(path))
      continue;
    // As git walks: an ignored directory is never entered, so nothing below it (not even a
    // deeper "!" rule) can bring a path back; dirs[k] is judged by the levels above it.
    let verdict = false;
    for (let k = 0; k < dirs.length && !verdict; k++) verdict = await lastMatch(levels, k, dirs[k], true);
    if (!verdict) verdict = await lastMatch(levels, levels.length - 1, path, false);
    if (verdict) ignored.add(path);
  }
  return ignored;
}

/**
 * Whether a path lies below a `.gitignore` the target snapshot left out (a `.ghostignore` named
 * it, say): the rules it held then are unknown, so its absence from the target proves nothing.
 */
export function belowUnknownGitignore(excludedThen: readonly RelPath[]): (path: RelPath) => boolean {
  const dirs = new Set(
    excludedThen.flatMap((e) =>
      e === ".gitignore" ? [""] : e.endsWith("/.gitignore") ? [e.slice(0, -"/.gitignore".length)] : [],
    ),
  );
  if (dirs.size === 0) return () => false;
  return (path) => dirs.has("") || ancestorsOf(path).some((dir) => dirs.has(dir));
}

/** One level's verdict on a path: ignored (true), brought back by a "!" rule (false), or none. */
function testRules(rules: Ignore, relative: string, isDir: boolean): boolean | undefined {
  try {
    const result = rules.test(isDir ? `${relative}/` : relative);
    if (result.ignored) return true;
    if (result.unignored) return false;
  } catch {
    // an unmatchable name: no verdict from this level
  }
  return undefined;
}

/**
 * Where the `.gitignore` rules that judged a path start: the innermost nested repository holding
 * it (a repository's rules stop at a nested one), else the workspace root in a git workspace;
 * null in a plain directory, where no ignore rule applies.
 */
export function ignoreScope(
  kind: "git" | "plain",
  nested: readonly RelPath[] | undefined,
): (path: RelPath) => RelPath | null {
  return (path) => {
    let scope: RelPath | null = kind === "git" ? "" : null;
    for (const root of nested ?? []) {
      if (path !== root && isWithin(path, root) && (scope === null || root.length > scope.length))
        scope = root;
    }
    return scope;
  };
}
