import type { Command } from "commander";
import { GhostcommitError } from "../../errors.js";
import type { DiffEntry } from "../../types.js";
import { globalsOf, open, withGlobals } from "../context.js";
import { color } from "../output.js";
import type { Action } from "../runner.js";

const LETTER: Record<DiffEntry["status"], string> = {
  added: "A",
  modified: "M",
  deleted: "D",
  "type-changed": "T",
};

export function register(program: Command, run: Action): void {
  withGlobals(program.command("diff"))
    .description("compare a snapshot with the working tree, or with another snapshot")
    .argument("<id>", "snapshot id")
    .argument("[id2]", "second snapshot id (default: the working tree)")
    .option("--stat", "diffstat")
    .option("--name-status", "one line per path with its status letter")
    .option("--patch", "full patch")
    .action(
      run(async (command) => {
        const globals = globalsOf(command);
        const options = command.opts() as { stat?: boolean; nameStatus?: boolean; patch?: boolean };
        const formats = [options.stat, options.nameStatus, options.patch].filter(Boolean).length;
        if (formats > 1) throw new GhostcommitError("usage", "choose one of --stat, --name-status, --patch");
        const [id, id2] = command.args;
        const ws = await open(globals);
        if (!globals.json && (options.stat || options.patch)) {
          const text = await ws.diffText(options.stat ? "stat" : "patch", id, id2);
          return { json: null, human: () => text || "no differences" };
        }
        const entries = await ws.diff(id, id2);
        return {
          json: entries,
          human: () => {
            if (entries.length === 0) return "no differences";
            const paint = {
              added: color.green,
              modified: color.yellow,
              deleted: color.red,
              "type-changed": color.magenta,
            };
            return entries.map((e) => `${paint[e.status](LETTER[e.status])}\t${e.path}`).join("\n");
          },
        };
      }),
    );
}
