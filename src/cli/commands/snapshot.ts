import path from "node:path";
import type { Command } from "commander";
import { runGit } from "../../git/exec.js";
import type { Workspace } from "../../workspace.js";
import { globalsOf, openToCapture, withGlobals } from "../context.js";
import { color, formatExcluded, humanText, nFiles, progress, shortId } from "../output.js";
import { refuseNotUtf8 } from "../raw-args.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("snapshot"))
    .description("take a snapshot of the whole workspace")
    .option("-m, --message <text>", "what this snapshot is for")
    .option("--include <path>", "capture this path even if ignored (repeatable)", collect, [])
    .action(
      run(async (command) => {
        const options = command.opts() as { message?: string; include: string[] };
        refuseNotUtf8(options.include, "include its directory instead: that captures every file below it");
        const ws = await openToCapture(globalsOf(command));
        const done = progress("taking a snapshot");
        const snap = await ws.snapshot({ message: options.message, include: options.include }).finally(done);
        const ignored = snap.fileCount === 0 && (await ignoredByRepository(ws));
        const missing = snap.missingIncludes ?? [];
        return {
          json: snap,
          human: () =>
            [
              `${color.green("snapshot")} ${color.bold(shortId(snap.id))} ${nFiles(snap.fileCount)}${snap.message !== "snapshot" ? ` · ${humanText(snap.message)}` : ""}`,
              ...formatExcluded(snap.excluded),
              ...missing.map((p) =>
                color.dim(
                  `  nothing at --include ${humanText(p)}: no such file or directory${/[*?[]/.test(p) ? " (a pattern is not expanded: name the files, or their directory)" : ""}`,
                ),
              ),
              ...(ignored
                ? [
                    color.dim(
                      "  this directory is ignored by the repository: none of its files are captured unless touched or named (--include . captures them all)",
                    ),
                  ]
                : []),
            ].join("\n"),
        };
      }),
    );
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A subdirectory workspace that the repository's ignore rules hide whole (one git process, only when nothing was captured). */
async function ignoredByRepository(ws: Workspace): Promise<boolean> {
  const top = ws.repositoryRoot;
  if (!top || top === ws.root) return false;
  const rel = path.relative(top, ws.root).split(path.sep).join("/");
  // "./": a name starting with ":" is no pathspec magic (see git/check-ignore.ts).
  const result = await runGit(["check-ignore", "-q", "--", `./${rel}/`], {
    cwd: top,
    env: { GIT_LITERAL_PATHSPECS: "0" },
    okCodes: [0, 1, 128],
  }).catch(() => null);
  return result?.code === 0;
}
