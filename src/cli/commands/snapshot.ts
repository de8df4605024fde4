import type { Command } from "commander";
import { globalsOf, open, withGlobals } from "../context.js";
import { color, formatExcluded, nFiles, progress, shortId } from "../output.js";
import type { Action } from "../runner.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("snapshot"))
    .description("take a snapshot of the whole workspace")
    .option("-m, --message <text>", "what this snapshot is for")
    .option("--include <path>", "capture this path even if ignored (repeatable)", collect, [])
    .action(
      run(async (command) => {
        const options = command.opts() as { message?: string; include: string[] };
        const ws = await open(globalsOf(command));
        const done = progress("taking a snapshot");
        const snap = await ws.snapshot({ message: options.message, include: options.include }).finally(done);
        return {
          json: snap,
          human: () =>
            [
              `${color.green("snapshot")} ${color.bold(shortId(snap.id))} ${nFiles(snap.fileCount)}${snap.message !== "snapshot" ? ` · ${snap.message}` : ""}`,
              ...formatExcluded(snap.excluded),
            ].join("\n"),
        };
      }),
    );
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
