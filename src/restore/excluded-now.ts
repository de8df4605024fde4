import { checkIgnoreInput, checkIgnoreName } from "../git/check-ignore.js";
import { dependencyDirOf } from "../capture/policy.js";
import { runGit, splitNul } from "../git/exec.js";
import { fsPath, isWithin, type RelPath, relBytes, relFromBytes } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import type { PathChange, PlanStep } from "./plan.js";

/**
 * Writes of paths today's capture leaves out, turned into skips (`excluded`): a file deleted since
 * the target that is now ignored (`.gitignore`, `info/exclude`), inside a dependency directory, or
 * over `largeFileBytes`. The safety snapshot cannot hold such a file, so restoring it could not
 * be undone, and the README promises restore never touches ignored or excluded paths. Paths the
 * restore captures on purpose (touched, included) are written; so is a path whose `.gitignore` the
 * same restore puts back or removes (the target's own rules decide then). Tracked files are always captured.
 * Inside a repository the capture looked into (`capturedRepos`, held by a plain directory or
 * nested and captured) that repository's own rules decide, as they decide its capture.
 */
export async function skipExcludedNow(
  engine: StoreContext,
  steps: PlanStep[],
  changes: PathChange[],
  includes: RelPath[],
  capturedRepos: readonly RelPath[],
  sizeOf: (oid: string) => Promise<number>,
): Promise<PlanStep[]> {
  const fresh = new Set(changes.filter((c) => c.current === null).map((c) => c.path));
  const writes = steps.filter(
    (s): s is Extract<PlanStep, { kind: "write" }> => s.kind === "write" && fresh.has(s.path),
  );
  if (writes.length === 0) return steps;
  // Touched and included paths are captured even if ignored or in a dependency directory, never
  // past the size limit.
  const included = (p: RelPath) => includes.some((i) => isWithin(p, i));
  const candidates = writes.filter((s) => !included(s.path));
  const rewrittenIgnores = new Set(
    steps.flatMap((s) => (s.kind !== "skip" && /(^|\/)\.gitignore$/.test(s.path) ? [s.path] : [])),
  );
  const dependencyDirs = new Set(engine.settings.dependencyDirs);
  const limit = engine.settings.largeFileBytes;
  // All sizes asked at once: cat-file answers in order, one round trip for them all.
  const sizes = await Promise.all(writes.map((s) => sizeOf(s.state.oid)));
  const suspects = writes.filter(
    (s, i) => sizes[i] > limit || (!included(s.path) && dependencyDirOf(s.path, dependencyDirs) !== null),
  );
  const git = engine.location.kind === "git" ? engine.location : null;
  // Each candidate goes to the innermost captured repository holding it, else to the workspace's.
  const repoOf = (p: RelPath) =>
    capturedRepos.reduce<RelPath | null>(
      (found, r) => (isWithin(p, r) && p !== r && (found === null || r.length > found.length) ? r : found),
      null,
    );
  const byRepo = new Map<RelPath, RelPath[]>();
  for (const step of candidates) {
    const repo = repoOf(step.path);
    if (repo === null) continue;
    if (!byRepo.has(repo)) byRepo.set(repo, []);
    byRepo.get(repo)!.push(step.path.slice(repo.length + 1));
  }
  const held = await Promise.all(
    [...byRepo].map(async ([repo, paths]) => {
      const found = await ignoringFiles(fsPath(engine.root, repo).toString("utf8"), "", paths);
      return [...found].map(([p, source]): [RelPath, string] => [`${repo}/${p}`, `${repo}/${source}`]);
    }),
  );
  const [ignoredHere, tracked] = git
    ? await Promise.all([
        ignoringFiles(
          git.worktreeRoot!,
          git.prefix,
          candidates.filter((s) => repoOf(s.path) === null).map((s) => s.path),
        ),
        lsFiles(
          git.worktreeRoot!,
          git.prefix,
          [],
          suspects.map((s) => s.path),
        ).then((lines) => new Set(lines.map((line) => fromTop(git.prefix, relFromBytes(line))))),
      ])
    : [new Map<RelPath, string>(), new Set<RelPath>()];
  const ignoredBy = new Map([...ignoredHere, ...held.flat()]);
  const excluded = new Set<RelPath>();
  for (const step of candidates) {
    const source = ignoredBy.get(step.path);
    // Ignored by a .gitignore this restore rewrites or removes: the target's rules decide.
    if (source !== undefined && !rewrittenIgnores.has(source)) excluded.add(step.path);
  }
  for (const step of suspects) if (!tracked.has(step.path)) excluded.add(step.path);
  if (excluded.size === 0) return steps;
  return steps.map((s) => (excluded.has(s.path) ? { kind: "skip", path: s.path, reason: "excluded" } : s));
}

/**
 * The candidates git ignores now, each with the file whose rule does (workspace-relative for a
 * `.gitignore` in it; as git names it otherwise: info/exclude, the user's excludes file).
 */
async function ignoringFiles(
  worktreeRoot: string,
  prefix: RelPath,
  paths: RelPath[],
): Promise<Map<RelPath, string>> {
  const found = new Map<RelPath, string>();
  if (paths.length === 0) return found;
  const full = (p: RelPath) => (prefix === "" ? p : `${prefix}/${p}`);
  const result = await runGit(["check-ignore", "-v", "-z", "--stdin"], {
    cwd: worktreeRoot,
    env: { GIT_LITERAL_PATHSPECS: "0" }, // check-ignore rejects the literal-pathspec switch
    input: checkIgnoreInput(paths.map((p) => relBytes(full(p)))),
    okCodes: [0, 1],
  }).catch(() => null);
  const fields = result ? splitNul(result.stdout) : [];
  // Four fields per matched path: the rule's file, its line, the pattern, the path. With -v git
  // also prints paths whose last matching rule is a negation (`!.env.example`): not ignored.
  for (let i = 0; i + 3 < fields.length; i += 4) {
    if (fields[i + 2][0] === 0x21) continue;
    found.set(
      fromTop(prefix, relFromBytes(checkIgnoreName(fields[i + 3]))),
      fromTop(prefix, fields[i].toString("latin1")),
    );
  }
  return found;
}

/**
 * `git ls-files -z FLAGS -- PATHS` (literal paths, relative to the workspace), its records as
 * git prints them (relative to the work tree's top). Git 2.39's ls-files takes no pathspec file,
 * so the paths go on the command line, a thousand at a time.
 */
export async function lsFiles(
  worktreeRoot: string,
  prefix: RelPath,
  flags: string[],
  paths: RelPath[],
): Promise<Buffer[]> {
  const lines: Buffer[] = [];
  for (let at = 0; at < paths.length; at += 1000) {
    const chunk = paths
      .slice(at, at + 1000)
      .map((p) => relBytes(prefix === "" ? p : `${prefix}/${p}`).toString("utf8"));
    const result = await runGit(["ls-files", "-z", ...flags, "--", ...chunk], {
      cwd: worktreeRoot,
      env: { GIT_LITERAL_PATHSPECS: "1" },
    });
    lines.push(...splitNul(result.stdout));
  }
  return lines;
}

/** A path git printed relative to the work tree's top, made relative to the workspace. */
export function fromTop(prefix: RelPath, rel: RelPath): RelPath {
  return prefix !== "" && rel.startsWith(`${prefix}/`) ? rel.slice(prefix.length + 1) : rel;
}
