import { existsSync, lstatSync } from "node:fs";
import path from "node:path";
import type { WorkspaceLocation } from "../git/repository.js";
import type { StatusEntry } from "../git/status.js";
import { ancestorsOf, isWithin, type RelPath } from "../paths.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { ignoresCase } from "./conversion.js";
import { GHOSTIGNORE, type Ghostignore, loadGhostignore } from "./ghostignore.js";
import type { Listing } from "./plain-status.js";
import { ghostignoreMatch } from "./policy.js";

/** The directories below the workspace root the last capture found holding a `.ghostignore`. */
interface KnownDirs {
  dirs: RelPath[];
}

export function isKnownDirs(value: unknown): value is KnownDirs {
  const v = value as KnownDirs | null;
  return (
    typeof v === "object" && v !== null && Array.isArray(v.dirs) && v.dirs.every((d) => typeof d === "string")
  );
}

/** The directory of each path named `.ghostignore` below the root (never the root's own). */
export function ghostignoreDirsOf(paths: Iterable<RelPath>): RelPath[] {
  const dirs: RelPath[] = [];
  for (const p of paths) if (p.endsWith(`/${GHOSTIGNORE}`)) dirs.push(p.slice(0, -GHOSTIGNORE.length - 1));
  return [...new Set(dirs)].sort();
}

async function knownDirs(storeDir: string): Promise<RelPath[]> {
  return (
    (await readJson<KnownDirs | null>(path.join(storeDir, STORE_FILES.ghostignoreDirs), null, isKnownDirs))
      ?.dirs ?? []
  );
}

/**
 * The `.ghostignore` rules of a workspace: the root's, those of the directories above it (a
 * subdirectory's workspace) and those of the directories below it that the last capture found
 * (tracked or not: see `withCurrentGhostignores`, `plainGhostignore`), as git reads `.gitignore`
 * files; `around` adds those on the way to these paths (a touch's), found on disk; `instead` takes
 * some of the workspace's as holding other rules (a restore's plan). A directory no longer holding
 * one adds nothing.
 */
export async function workspaceGhostignore(
  location: WorkspaceLocation,
  storeDir: string,
  ignoreCase: boolean,
  around: readonly RelPath[] = [],
  instead?: ReadonlyMap<RelPath, string | null>,
): Promise<Ghostignore | null> {
  const below = await knownDirs(storeDir);
  const onTheWay = around.flatMap((p) => ancestorsOf(p));
  return loadGhostignore(
    location.root,
    ignoreCase,
    location.kind === "git" ? location.worktreeRoot : null,
    [...new Set([...below, ...onTheWay])],
    instead,
  );
}

/** The rules known before a capture's status ran, and the directories below the root they came from. */
export interface KnownRules {
  rules: Ghostignore | null;
  dirs: RelPath[];
}

export async function ghostignoreBeforeStatus(
  location: WorkspaceLocation,
  storeDir: string,
  ignoreCase: boolean,
): Promise<KnownRules> {
  const dirs = await knownDirs(storeDir);
  return { rules: await loadGhostignore(location.root, ignoreCase, location.worktreeRoot, dirs), dirs };
}

/**
 * A capture's rules: first those the last capture found (read beside status, with the base tree's
 * facts that depend on them), then, where the base tree (`tracked`, its `.ghostignore` files) and
 * status (files added or changed, untracked ones) show others, the rules with those, and the base
 * facts again (`again`) when the rules differ. The directories found are kept for the next capture,
 * a restore's and a touch's.
 */
export async function withCurrentGhostignores<Base>(
  ctx: { location: WorkspaceLocation; paths: { dir: string } },
  ignoreCase: boolean,
  seen: {
    entries: readonly StatusEntry[];
    strip: (p: RelPath) => RelPath;
    tracked: (base: Base) => RelPath[];
  },
  first: KnownRules & { base: Base; again: (rules: Ghostignore | null) => Promise<Base> },
): Promise<{ ghostignore: Ghostignore | null; base: Base; dirs: RelPath[] }> {
  const { prefix } = ctx.location;
  const inStatus = seen.entries.flatMap((e) =>
    (e.kind === "untracked" || e.kind === "changed") && isWithin(e.path, prefix) ? [seen.strip(e.path)] : [],
  );
  const dirs = ghostignoreDirsOf([...seen.tracked(first.base), ...inStatus]);
  if (sameList(dirs, first.dirs)) return { ghostignore: first.rules, base: first.base, dirs };
  const kept: KnownDirs = { dirs };
  await writeFileAtomic(
    path.join(ctx.paths.dir, STORE_FILES.ghostignoreDirs),
    JSON.stringify(kept),
    0o600,
    false,
  ).catch(() => {});
  const rules = await loadGhostignore(ctx.location.root, ignoreCase, ctx.location.worktreeRoot, dirs);
  if ((rules?.hash ?? null) === (first.rules?.hash ?? null))
    return { ghostignore: rules, base: first.base, dirs };
  return { ghostignore: rules, base: await first.again(rules), dirs };
}

/**
 * The rules for paths a capture takes although ignored (touched, `--include`d): also those of the
 * `.ghostignore` files on the way to each, which neither the index nor status names where git
 * ignores their directory, as a touch's before-state reads them (`ghostignoreJudge`); null where
 * there is none beyond `dirs`. Else a file kept out of the before-state but captured at the
 * turn's end would look created by the turn, and a rewind delete it.
 */
export async function rulesAround(
  location: WorkspaceLocation,
  ignoreCase: boolean,
  dirs: readonly RelPath[],
  paths: readonly RelPath[],
): Promise<Ghostignore | null> {
  const known = new Set(dirs);
  const more = [...new Set(paths.flatMap((p) => ancestorsOf(p)))].filter(
    (dir) =>
      !known.has(dir) &&
      existsSync(path.join(location.root, Buffer.from(dir, "latin1").toString("utf8"), GHOSTIGNORE)),
  );
  if (more.length === 0) return null;
  return loadGhostignore(location.root, ignoreCase, location.worktreeRoot, [...known, ...more]);
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
  paths: readonly RelPath[],
): Promise<(rel: RelPath) => boolean> {
  const rules = await workspaceGhostignore(location, storeDir, await ignoresCase(location, storeDir), paths);
  return (rel) => ghostignoreMatch(rel, rules?.matcher ?? null) !== null;
}

/**
 * A plain directory's `.ghostignore` rules for a capture: the root's and those below it that the
 * last capture found, with those this capture's listing shows (files new or changed since, a
 * first snapshot's every file). `indexed` lists the files the store's index holds, asked only
 * where the record of them is lost. The directories are kept for the next capture, a
 * restore's and a touch's.
 */
export async function plainGhostignore(
  ctx: { location: { root: string }; paths: { dir: string } },
  ignoreCase: boolean,
  listing: Pick<Listing, "changed" | "walked">,
  indexed: () => Promise<RelPath[]>,
): Promise<Ghostignore | null> {
  const listed = [
    ...listing.changed.flatMap((c) => (c.deleted ? [] : [c.path])),
    ...listing.walked.untracked,
  ];
  const { root } = ctx.location;
  const file = path.join(ctx.paths.dir, STORE_FILES.ghostignoreDirs);
  const kept = await readJson<KnownDirs | null>(file, null, isKnownDirs);
  const found = [...(kept?.dirs ?? ghostignoreDirsOf(await indexed())), ...ghostignoreDirsOf(listed)];
  // One there in any form (a symlink to nothing too): loading it says what is wrong with it.
  const there = (dir: RelPath) =>
    lstatSync(path.join(root, Buffer.from(dir, "latin1").toString("utf8"), GHOSTIGNORE), {
      throwIfNoEntry: false,
    }) !== undefined;
  const dirs = [...new Set(found)].filter(there).sort();
  if (!kept || !sameList(dirs, kept.dirs))
    await writeFileAtomic(file, JSON.stringify({ dirs } satisfies KnownDirs), 0o600, false).catch(() => {});
  return loadGhostignore(root, ignoreCase, null, dirs);
}
