import type { Command } from "commander";
import { explained } from "../../errors.js";
import type { HeadMoved, RestoreReport, SkippedPath } from "../../types.js";
import { whereHeadIs } from "../../restore/head-moved.js";
import { WORKSPACE_CONFIG } from "../../config.js";
import { checkNamedPaths, commandHint, globalsOf, openToCapture, withGlobals } from "../context.js";
import { color, nFiles, formatCount, humanPath, progress, shortId, skipStatus } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("restore"))
    .description("make the workspace's files equal to a snapshot (a safety snapshot is taken first)")
    .argument("<id>", "snapshot id")
    .argument("[paths...]", "only these paths (a directory names everything below it)")
    .option("--dry-run", "print the plan and change nothing")
    .action(
      run(async (command) => {
        const options = command.opts() as { dryRun?: boolean };
        const globals = globalsOf(command);
        const [id, ...given] = command.args;
        const paths = checkNamedPaths(globals, given);
        const ws = await openToCapture(globals);
        const done = progress("restoring");
        const report = await ws.restore(id, { dryRun: options.dryRun, paths }).finally(done);
        // A restore that changed the workspace's config may have changed its `store` setting:
        // the way back names the store its safety snapshot is in.
        const config = [...report.written, ...report.deleted].includes(WORKSPACE_CONFIG);
        const store = globals.store ?? (config ? ws.store : undefined);
        const undo = report.safety
          ? commandHint({ ...globals, store }, `restore ${shortId(report.safety)}`)
          : null;
        return {
          json: report,
          human: () => describeRestore(report, undo),
          ...skipStatus(report),
        };
      }),
    );
}

/** Skips of one directory for one reason past this many are said on one line (--json lists each). */
const SKIPS_SHOWN_ONE_BY_ONE = 10;

/** True when a path could not be written (exit status 1); excluded paths do not count. */
export function describeRestore(
  report: {
    written: string[];
    deleted: string[];
    skipped: RestoreReport["skipped"];
    safety: string | null;
    dryRun?: boolean;
    head?: HeadMoved;
  },
  undo: string | null = null,
): string {
  const lines: string[] = [];
  const verb = report.dryRun ? "would write" : "wrote";
  const del = report.dryRun ? "would delete" : "deleted";
  for (const path of report.written)
    lines.push(`  ${color.green(report.dryRun ? "write " : "wrote ")} ${humanPath(path)}`);
  for (const path of report.deleted)
    lines.push(`  ${color.red(report.dryRun ? "delete" : "gone  ")} ${humanPath(path)}`);
  const changed = [...report.written, ...report.deleted];
  // Many files of one directory left for one reason (an unreadable folder's): one line for them.
  const groups = new Map<string, { dir: string; why: string; paths: string[] }>();
  for (const skip of report.skipped) {
    // A directory left out of a later snapshot (grown past the large-dir limit) whose files an
    // earlier one captured: those are written or deleted as listed, only the rest is left.
    const inside = changed.some((p) => p.startsWith(`${skip.path.replace(/\/$/, "")}/`));
    const why = skipWhy(skip, inside);
    const dir = skip.path.includes("/") ? skip.path.slice(0, skip.path.lastIndexOf("/") + 1) : "";
    const group = groups.get(`${dir}\0${why}`) ?? { dir, why, paths: [] };
    group.paths.push(skip.path);
    groups.set(`${dir}\0${why}`, group);
  }
  for (const { dir, why, paths } of groups.values()) {
    if (dir !== "" && paths.length > SKIPS_SHOWN_ONE_BY_ONE)
      lines.push(
        `  ${color.yellow("skip  ")} ${humanPath(dir)} (${formatCount(paths.length)} files in it, each ${why})`,
      );
    else for (const path of paths) lines.push(`  ${color.yellow("skip  ")} ${humanPath(path)} (${why})`);
  }
  lines.push(`${verb} ${nFiles(report.written.length)}, ${del} ${formatCount(report.deleted.length)}`);
  // Nothing went back (the files were as the snapshot has them): "only files went back" would be wrong.
  if (report.head && changed.length > 0) lines.push(color.yellow(headLine(report.head, report.dryRun)));
  if (undo) lines.push(color.dim(`undo with: ${undo}`));
  return lines.join("\n");
}

/** A restore moves files, never git's HEAD: said where HEAD is not where it was (see HeadMoved). */
function headLine(head: HeadMoved, dryRun: boolean | undefined): string {
  return `${whereHeadIs(head)}: ${dryRun ? "only files would go back" : "only files went back"}; the branch, commits and staged changes stay as git has them`;
}

/** Why an `excluded` path was left, where both snapshots hold it (see ExcludedDetail). */
const EXCLUDED_BECAUSE: Record<NonNullable<SkippedPath["detail"]>, string> = {
  submodule: "a submodule, which a restore never enters nor checks out at another commit",
  "local-edit":
    "its bytes on disk are an edit no snapshot holds (assume-unchanged, skip-worktree, or made while the restore ran)",
  "sparse-checkout": "outside the sparse checkout (not on disk)",
  unreadable: "it cannot be read now (permissions, or no regular file) and no snapshot holds what it is",
  ghostignore: "a .ghostignore names it, so no snapshot holds it and no restore writes or deletes it",
  "in-the-way": "a directory of files no snapshot holds (ignored or excluded ones) stands where it goes",
  "guards-files":
    "its rules keep files on disk out of every snapshot, and its restored version would let them into the next one",
};

/** What a person can do about such a path, said after why it was left. */
const EXCLUDED_ADVICE: Partial<Record<NonNullable<SkippedPath["detail"]>, string>> = {
  unreadable: "make it readable, or remove it, and run this again",
  "in-the-way": "move them away and run this again",
  "guards-files": "edit it yourself to change that",
};

function skipWhy(skip: SkippedPath, changedInside: boolean): string {
  if (skip.reason === "excluded") {
    const advice = skip.detail && EXCLUDED_ADVICE[skip.detail];
    if (skip.detail)
      return `excluded: ${EXCLUDED_BECAUSE[skip.detail]}, so it is left as it is${advice ? `; ${advice}` : ""}`;
    // Otherwise left out of the target or of the safety snapshot: written over or deleted, it could not come back.
    if (changedInside) return "excluded: what in it the target or the safety snapshot lacks is left as it is";
    return "excluded: the target or the safety snapshot lacks it, so it is left as it is";
  }
  return skip.errno ? `${skip.reason}: ${explained(skip.errno)}` : skip.reason;
}
