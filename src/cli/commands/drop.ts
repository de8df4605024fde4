import type { Command } from "commander";
import { globalsOf, open, withGlobals } from "../context.js";
import { shortId } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("drop"))
    .description("forget snapshots")
    .argument("<id...>", "snapshot ids")
    .action(
      run(async (command) => {
        const result = await (await open(globalsOf(command))).drop(command.args);
        return { json: result, human: () => `dropped ${result.dropped.map(shortId).join(", ")}` };
      }),
    );
}
