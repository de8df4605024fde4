import type { Command } from "commander";
import { globalsOf, open, withGlobals } from "../context.js";
import { color, formatCount, formatExcluded, humanPath, humanText } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("show"))
    .description("show one snapshot with its file list")
    .argument("<id>", "snapshot id or unique prefix (7+ hex digits)")
    .action(
      run(async (command) => {
        const details = await (await open(globalsOf(command))).show(command.args[0]);
        return {
          json: details,
          human: () =>
            [
              `${color.bold(details.id)}`,
              `created  ${details.createdAt}`,
              `message  ${humanText(details.message)}`,
              `parent   ${details.parent ?? "(none)"}`,
              // A restore's safety snapshot names the session it rewound, and no turn.
              ...(details.session
                ? [
                    `session  ${humanText(details.session)}${details.turn === undefined ? "" : ` turn ${humanText(details.turn)}`}`,
                  ]
                : []),
              `files    ${formatCount(details.fileCount)}`,
              ...formatExcluded(details.excluded),
              "",
              ...details.files.map(humanPath),
            ].join("\n"),
        };
      }),
    );
}
