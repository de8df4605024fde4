import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { fileIdentity } from "../git/index-file.js";
import type { WorkspaceLocation } from "../git/repository.js";
import { isWithin, type RelPath, relFromBytes } from "../paths.js";
import type { StatusEntry } from "../git/status.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { ignoresCase } from "./conversion.js";
import { GHOSTIGNORE, type Ghostignore, loadGhostignore } from "./ghostignore.js";
import { ghostignoreMatch } from "./policy.js";

/** The directories below the workspace root last known to hold a `.ghostignore`, by the index they came from. */
interface KnownDirs {
  index: string;
  tracked: RelPath[];
  /** Untracked ones a capture's status found: read first next time, so its rules hash the same. */
  untracked: RelPath[];
}

export function isKnownDirs(value: unknown): value is KnownDirs {
  const v = value as KnownDirs | null;
  const strings = (list: unknown) => Array.isArray(list) && list.every((d) => typeof d === "string");
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.index === "string" &&
    strings(v.tracked) &&
    strings(v.untracked)
  );
}

/** The directory of each path named `.ghostignore` below the root (never the root's own). */
export function ghostignoreDirsOf(paths: Iterable<RelPath>): RelPath[] {
  const dirs: RelPath[] = [];
  for (const p of paths) if (p.endsWith(`/${GHOSTIGNORE}`)) dirs.push(p.slice(0, -GHOSTIGNORE.length - 1));
  return dirs;
}

/**
 * The `.ghostignore` rules of a git workspace: the root's, those of the directories above it (a
 * subdirectory's workspace) and those of the directories below it, as git reads `.gitignore`
 * files. The ones below are found in git's index (one `ls-files`, only when the index changed
 * since the last answer) and, for those not tracked, by status (`untracked`, given by the
 * capture once status has run); a directory no longer holding one simply adds nothing.
 */
export async function workspaceGhostignore(
  location: WorkspaceLocation,
  storeDir: string,
  ignoreCase: boolean,
): Promise<Ghostignore | null> {
  return (await loadKnown(location, storeDir, ignoreCase, null)).rules;
}

/** The rules, and the untracked directories below the root they were read from. */
interface KnownRules {
  rules: Ghostignore | null;
  untracked: RelPath[];
}

async function loadKnown(
  location: WorkspaceLocation,
  storeDir: string,
  ignoreCase: boolean,
  untracked: RelPath[] | null,
): Promise<KnownRules> {
  const known = location.kind === "git" ? await knownDirs(location, storeDir, untracked) : null;
  const below = known ? [...new Set([...known.tracked, ...known.untracked])] : [];
  return {
    rules: await loadGhostignore(location.root, ignoreCase, location.worktreeRoot, below),
    untracked: known?.untracked ?? [],
  };
}

/**
 * A capture's rules: first those known before status ran (read beside it, with the base tree's
 * facts that depend on them), then, where status lists untracked `.ghostignore` files other than
 * those, the rules with them, and the base facts again (`again`) when those rules differ.
 */
export async function withUntrackedGhostignores<Base>(
  ctx: { location: WorkspaceLocation; paths: { dir: string } },
  ignoreCase: boolean,
  entries: readonly StatusEntry[],
  strip: (p: RelPath) => RelPath,
  first: KnownRules & { base: Base; again: (rules: Ghostignore | null) => Promise<Base> },
): Promise<{ ghostignore: Ghostignore | null; base: Base }> {
  const { prefix } = ctx.location;
  const untracked = ghostignoreDirsOf(
    entries.flatMap((e) => (e.kind === "untracked" && isWithin(e.path, prefix) ? [strip(e.path)] : [])),
  ).sort();
  if (sameList(untracked, first.untracked)) return { ghostignore: first.rules, base: first.base };
  const { rules } = await loadKnown(ctx.location, ctx.paths.dir, ignoreCase, untracked);
  if ((rules?.hash ?? null) === (first.rules?.hash ?? null)) return { ghostignore: rules, base: first.base };
  return { ghostignore: rules, base: await first.again(rules) };
}

/** The rules known before status ran: see withUntrackedGhostignores. */
export function ghostignoreBeforeStatus(
  location: WorkspaceLocation,
  storeDir: string,
  ignoreCase: boolean,
): Promise<KnownRules> {
  return loadKnown(location, storeDir, ignoreCase, null);
}

async function knownDirs(
  location: WorkspaceLocation,
  storeDir: string,
  untracked: RelPath[] | null,
): Promise<{ tracked: RelPath[]; untracked: RelPath[] }> {
  const cacheFile = path.join(storeDir, STORE_FILES.ghostignoreDirs);
  const indexFile = path.join(location.gitDir!, "index");
  const [identity, cached] = await Promise.all([
    fileIdentity(indexFile),
    readJson<KnownDirs | null>(cacheFile, null, isKnownDirs),
  ]);
  let tracked: RelPath[];
  if (identity !== null && cached?.index === identity) tracked = cached.tracked;
  else {
    // Read-only, and no fsmonitor hook of the user's runs for it.
    const listed = await runGit(
      ["-c", "core.fsmonitor=false", "ls-files", "-z", "--", `:(glob)**/${GHOSTIGNORE}`],
      {
        cwd: location.root,
        env: { GIT_LITERAL_PATHSPECS: "0", GIT_OPTIONAL_LOCKS: "0" },
        okCodes: [0, 128],
      },
    ).catch(() => null);
    // Unlistable (a damaged index): what status makes of it is the capture's to report.
    tracked = ghostignoreDirsOf(splitNul(listed?.stdout ?? Buffer.alloc(0)).map(relFromBytes));
  }
  const untrackedNow = untracked ?? cached?.untracked ?? [];
  const changed =
    identity !== null &&
    (cached?.index !== identity || (untracked !== null && !sameList(untracked, cached?.untracked ?? [])));
  if (changed) {
    const kept: KnownDirs = { index: identity, tracked, untracked: untrackedNow };
    await writeFileAtomic(cacheFile, JSON.stringify(kept), 0o600, false).catch(() => {});
  }
  return { tracked, untracked: untrackedNow };
}

function sameList(a: RelPath[], b: RelPath[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Whether the workspace's `.ghostignore` files keep a path out of every snapshot, for the captures
 * outside a snapshot's own walk: a touched path's before-state, a progress mark's edited files.
 * Their rules win over `touch`, as over `--include`: they are what keeps secrets out.
 */
export async function ghostignoreJudge(
  location: WorkspaceLocation,
  storeDir: string,
): Promise<(rel: RelPath) => boolean> {
  const rules = await workspaceGhostignore(location, storeDir, await ignoresCase(location, storeDir));
  return (rel) => ghostignoreMatch(rel, rules?.matcher ?? null) !== null;
}
