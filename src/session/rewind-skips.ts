import { displayPath, type RelPath } from "../paths.js";
import { isNamed } from "../restore/path-filter.js";
import type { SnapshotMeta } from "../store/metadata.js";
import type { RewindReport } from "../types.js";
import { existsNow } from "../util/small-files.js";
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
  for (const p of how.notCaptured.sort())
    report.skipped.push({ path: displayPath(p), reason: "not-captured" });
  const excluded = new Set([
    ...newlyExcluded(how.before, how.afters).filter((p) => isNamed(p, named) && existsNow(root, p)),
    ...[...how.excludedNow].filter((p) => isNamed(p, named)),
  ]);
  const said = new Set([...report.skipped.map((s) => s.path), ...report.written, ...report.deleted]);
  for (const p of [...excluded].sort())
    if (!said.has(displayPath(p))) report.skipped.push({ path: displayPath(p), reason: "excluded" });
}
