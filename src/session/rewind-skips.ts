import { dependencyDirOf } from "../capture/policy.js";
import { displayPath, type RelPath, relFromBytes } from "../paths.js";
import { fromTop, lsFiles } from "../restore/excluded-now.js";
import type { StoreContext } from "../store/context.js";
import { isNamed } from "../restore/path-filter.js";
import type { SnapshotMeta } from "../store/metadata.js";
import type { RewindReport } from "../types.js";
import { existsNow, isFileOnDisk } from "../util/small-files.js";
import { newlyExcluded } from "./rewind-plan.js";

/**
 * Adds to a rewind's report the paths whose state before the turn was never captured
 * (`not-captured`), then, as `excluded` skips, the paths it left as they are because a
 * snapshot left them out: those the rewound turns left uncaptured (`newlyExcluded`, still on
 * disk) and those excluded since (`excludedNow`). Once each: the restore's own skip already says
 * why it left a path, and a file it wrote or deleted was not left (one a turn grew past the size
 * limit goes back to its bytes before that turn).
 */
export function addLeftSkips(
  report: Pick<RewindReport, "written" | "deleted" | "skipped">,
  how: {
    notCaptured: RelPath[];
    root: string;
    named: RelPath[] | undefined;
    before: SnapshotMeta;
    afters: (SnapshotMeta | null)[];
    excludedNow: Iterable<RelPath>;
  },
): void {
  const { root, named } = how;
  for (const p of how.notCaptured.filter((p) => isNamed(p, named)).sort())
    report.skipped.push({ path: displayPath(p), reason: "not-captured" });
  const excluded = new Set([
    ...newlyExcluded(how.before, how.afters).filter((p) => isNamed(p, named) && existsNow(root, p)),
    ...[...how.excludedNow].filter((p) => isNamed(p, named)),
  ]);
  const said = new Set([...report.skipped.map((s) => s.path), ...report.written, ...report.deleted]);
  // Left out by a `.ghostignore` when a turn ended: said, as a restore says it of one named now.
  const ghostignored = new Set(
    how.afters.flatMap((after) =>
      (after?.excluded ?? []).flatMap((e) => (e.reason === "ignore-file" ? [e.path] : [])),
    ),
  );
  for (const p of [...excluded].sort()) {
    if (said.has(displayPath(p))) continue;
    const detail = ghostignored.has(p) ? { detail: "ghostignore" as const } : {};
    report.skipped.push({ path: displayPath(p), reason: "excluded", ...detail });
  }
}

/**
 * Of the paths the rewound turns changed, the untracked files on disk that today's
 * `dependencyDirs` leave out though no agent tool touched them: a name added to the setting after
 * the turn. Their state now is unknown to any snapshot (the safety snapshot holds them only
 * because a rewind includes what the turns changed), so, as for a `.ghostignore` line added since,
 * a rewind leaves them and lists them, neither a conflict nor deleted.
 */
export async function inDependencyDirsSince(
  engine: StoreContext,
  paths: Iterable<RelPath>,
  touched: ReadonlySet<RelPath>,
): Promise<Set<RelPath>> {
  const names = new Set(engine.settings.dependencyDirs);
  const found = [...paths].filter(
    (p) => !touched.has(p) && dependencyDirOf(p, names) !== null && isFileOnDisk(engine.root, p),
  );
  const git = engine.location.kind === "git" ? engine.location : null;
  if (!git || found.length === 0) return new Set(found);
  // Tracked files are always captured: a dependency directory's rule never leaves them out.
  const lines = await lsFiles(git.worktreeRoot!, git.prefix, [], found);
  const tracked = new Set(lines.map((line) => fromTop(git.prefix, relFromBytes(line))));
  return new Set(found.filter((p) => !tracked.has(p)));
}

/** The paths an agent's tool touched in the session or in the rewound turns. */
export function touchedBy(state: { touched: Iterable<RelPath> }, turns: { touched: Iterable<RelPath> }[]) {
  return new Set<RelPath>([...state.touched, ...turns.flatMap((t) => [...t.touched])]);
}
