import type { Command } from "commander";
import { globalsOf, open, withGlobals } from "../context.js";
import { color } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("doctor"))
    .description("check git, the store and leftovers of interrupted runs")
    .action(
      run(async (command) => {
        const report = await (await open(globalsOf(command))).doctor();
        return {
          json: report,
          exitCode: report.ok ? 0 : 1,
          human: () =>
            [
              `git ${report.gitVersion ?? "?"} · store ${report.store}`,
              ...(report.ok
                ? [color.green("no problems found")]
                : report.problems.map((p) => `${color.red("problem")} ${p.message}`)),
            ].join("\n"),
        };
      }),
    );
}
