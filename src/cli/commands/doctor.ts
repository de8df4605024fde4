import type { Command } from "commander";
import { checkInstalledHooks } from "../../integrations/installed-hooks.js";
import { globalsOf, open, withGlobals } from "../context.js";
import { color, humanLines } from "../output.js";
import type { Action } from "../runner.js";
import type { DoctorRepair } from "../../types.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("doctor"))
    .description("check git, the store and leftovers of interrupted runs")
    .option(
      "--repair",
      "fix what can be fixed: drop snapshots whose objects are gone, reset damaged caches, remove leftovers and stale locks",
    )
    .action(
      run(async (command) => {
        const { repair } = command.opts() as { repair?: boolean };
        const ws = await open(globalsOf(command));
        const report = await ws.doctor({
          repair: Boolean(repair),
          // Installed hooks whose command no longer runs (moved Node, removed package).
          checks: [checkInstalledHooks],
        });
        return {
          json: report,
          exitCode: report.ok ? 0 : 1,
          human: () =>
            [
              // A repository store's snapshots are refs and objects in the repository, not there.
              ws.store === "repo"
                ? `git ${report.gitVersion ?? "?"} · store repo: snapshots in the repository's git directory (refs/ghostcommit/), sessions and logs in ${report.store}`
                : `git ${report.gitVersion ?? "?"} · store ${report.store}`,
              ...(report.watchman
                ? [`watchman: ${report.watchman.inUse ? "in use" : "not used"}: ${report.watchman.reason}`]
                : []),
              // Findings may name sessions, turns and remotes: never sent to the terminal raw.
              ...repairedLines(report.repaired ?? []),
              ...(report.repaired && report.repaired.length === 0 ? ["nothing to repair"] : []),
              ...(report.ok
                ? [color.green("no problems found")]
                : report.problems.map((p) => `${color.red("problem")} ${humanLines(p.message)}`)),
            ].join("\n"),
        };
      }),
    );
}

/** What repair did, a line each; past a few, the leftover files it removed (a killed restore's thousands of temp files) are one line. */
function repairedLines(repaired: DoctorRepair[]): string[] {
  const leftovers = repaired.filter((r) => r.code === "removed-leftover");
  const shown = leftovers.length > 5 ? new Set(leftovers.slice(0, 3)) : new Set(leftovers);
  const lines = repaired
    .filter((r) => r.code !== "removed-leftover" || shown.has(r))
    .map((r) => `${color.green("repaired")} ${humanLines(r.message)}`);
  const more = leftovers.length - shown.size;
  if (more > 0)
    lines.push(`${color.green("repaired")} removed ${more} more leftover files (--json lists each)`);
  return lines;
}
