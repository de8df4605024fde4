import { type Dirent, readdirSync } from "node:fs";
import { ignoresCase } from "../capture/conversion.js";
import { GHOSTIGNORE } from "../capture/ghostignore.js";
import { workspaceGhostignore } from "../capture/ghostignore-dirs.js";
import { ghostignoreMatch } from "../capture/policy.js";
import type { CatFile } from "../git/cat-file.js";
import { MODE } from "../git/objects.js";
import { fsPath, isWithin, type RelPath, relFromBytes } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import type { StoredExclusion } from "../store/metadata.js";
import type { PlanStep } from "./plan.js";

/**
 * A `.ghostignore` a restore would delete or rewrite is left as it is where its rules keep a file
 * on disk out of every snapshot (`currentExcluded`, reason `ignore-file`) that the rules after the
 * restore would let in: no snapshot holds that file, so the restore leaves it, and the next
 * snapshot would capture it (a key, a token), a push carry it. The skip says so (detail
 * `guards-files`); changing those rules stays the user's own edit.
 */
export async function keepGuardingGhostignores(
  engine: StoreContext,
  cat: CatFile,
  steps: PlanStep[],
  currentExcluded: readonly StoredExclusion[],
): Promise<PlanStep[]> {
  const changing = steps.filter((s) => s.kind !== "skip" && isGhostignore(s.path));
  if (changing.length === 0) return steps;
  const caseless = await ignoresCase(engine.location, engine.paths.dir);
  const keptOut = currentExcluded.filter((e) => e.reason === "ignore-file").map((e) => e.path);
  // A .gitignore the same restore changes may stop ignoring files both rules keep out today (a
  // key git ignores too, which no capture lists): those on disk below the changing files count.
  if (steps.some((s) => s.kind !== "skip" && /(^|\/)\.gitignore$/.test(s.path))) {
    const now = await workspaceGhostignore(engine.location, engine.paths.dir, caseless);
    const dirs = changing.map((s) => dirOf(s.path));
    const skip = new Set([".git", ...engine.settings.dependencyDirs]);
    keptOut.push(
      ...matchingFilesBelow(
        engine.root,
        dirs,
        skip,
        (rel) => ghostignoreMatch(rel, now?.matcher ?? null) !== null,
      ),
    );
  }
  if (keptOut.length === 0) return steps;
  const instead = new Map<RelPath, string | null>();
  for (const step of changing) {
    const dir = dirOf(step.path);
    // A symlink or a directory is no rules file: as absent, as a capture reads it.
    const text =
      step.kind === "write" && step.state.mode !== MODE.link && step.state.mode !== MODE.tree
        ? ((await cat.read(step.state.oid))?.content.toString("utf8") ?? null)
        : null;
    instead.set(dir, text);
  }
  const after = await workspaceGhostignore(engine.location, engine.paths.dir, caseless, keptOut, instead);
  const exposed = keptOut.filter((p) => ghostignoreMatch(p, after?.matcher ?? null) === null);
  if (exposed.length === 0) return steps;
  const guarding = new Set(
    [...instead.keys()].filter((dir) => exposed.some((p) => dir === "" || isWithin(p, dir))),
  );
  return steps.map((s) =>
    s.kind !== "skip" && isGhostignore(s.path) && guarding.has(dirOf(s.path))
      ? { kind: "skip", path: s.path, reason: "excluded", detail: "guards-files" }
      : s,
  );
}

function isGhostignore(p: RelPath): boolean {
  return p === GHOSTIGNORE || p.endsWith(`/${GHOSTIGNORE}`);
}

function dirOf(p: RelPath): RelPath {
  return p === GHOSTIGNORE ? "" : p.slice(0, -GHOSTIGNORE.length - 1);
}

/** Past this many entries a walk stops: what it found so far decides (a guard, not an inventory). */
const WALK_LIMIT = 100_000;

/**
 * The files below `dirs` (workspace-relative) that `matches`, never entering a symlink, `.git` or
 * a dependency directory (`skip`), whose files no snapshot holds either way.
 */
function matchingFilesBelow(
  root: string,
  dirs: RelPath[],
  skip: ReadonlySet<string>,
  matches: (rel: RelPath) => boolean,
): RelPath[] {
  const found: RelPath[] = [];
  const pending = [...new Set(dirs)];
  let seen = 0;
  while (pending.length > 0 && seen < WALK_LIMIT) {
    const dir = pending.pop()!;
    let entries: Dirent<Buffer>[];
    try {
      entries = readdirSync(fsPath(root, dir), { withFileTypes: true, encoding: "buffer" });
    } catch {
      continue; // unreadable: reported by the capture, its files in no snapshot
    }
    for (const entry of entries) {
      seen++;
      const name = relFromBytes(entry.name);
      const rel = dir === "" ? name : `${dir}/${name}`;
      if (entry.isDirectory()) {
        if (!skip.has(name)) pending.push(rel);
      } else if (matches(rel)) found.push(rel); // a symlink too: captured as one
    }
  }
  return found;
}
