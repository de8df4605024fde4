import type { Command } from "commander";
import { GhostcommitError } from "../../errors.js";
import { MODE } from "../../git/objects.js";
import type { DiffEntry } from "../../types.js";
import { checkNamedPaths, globalsOf, open, openToCapture, withGlobals } from "../context.js";
import { color, humanPath } from "../output.js";
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
    .argument(
      "[paths...]",
      "only these paths, after -- or after the ids (a directory names everything below it)",
    )
    .option("--stat", "diffstat")
    .option("--name-status", "one line per path with its status letter")
    .option("--patch", "full patch")
    .action(
      run(async (command) => {
        const globals = globalsOf(command);
        const options = command.opts() as { stat?: boolean; nameStatus?: boolean; patch?: boolean };
        const formats = [options.stat, options.nameStatus, options.patch].filter(Boolean).length;
        if (formats > 1) throw new GhostcommitError("usage", "choose one of --stat, --name-status, --patch");
        const { id, id2, paths: given } = splitDiffArgs(command);
        const paths = checkNamedPaths(globals, given);
        const ws = id2 === undefined ? await openToCapture(globals) : await open(globals);
        if (!globals.json && (options.stat || options.patch)) {
          const text = await ws.diffText(options.stat ? "stat" : "patch", id, id2, { paths });
          // A patch or diffstat is for tools (git apply): nothing differing prints nothing, as git's.
          return { json: null, human: () => text };
        }
        const entries = await ws.diff(id, id2, { paths });
        return {
          json: entries,
          human: () => {
            if (entries.length === 0) return options.nameStatus ? "" : "no differences";
            const paint = {
              added: color.green,
              modified: color.yellow,
              deleted: color.red,
              "type-changed": color.magenta,
            };
            // A submodule's entry is the commit checked out in it: its files are in no snapshot.
            // One side a submodule, the other not (a file, nothing): said which.
            const what = (e: DiffEntry) => {
              const [was, is] = [e.oldMode === MODE.gitlink, e.newMode === MODE.gitlink];
              if (was && is) return " (submodule: the commit checked out in it)";
              if (was) return e.newMode ? " (a submodule, now a file)" : " (a submodule's commit)";
              if (is) return e.oldMode ? " (a file, now a submodule)" : " (a submodule's commit)";
              return "";
            };
            return entries
              .map((e) => `${paint[e.status](LETTER[e.status])}\t${humanPath(e.path)}${what(e)}`)
              .join("\n");
          },
        };
      }),
    );
}

const SNAPSHOT_ID = /^[0-9a-f]{7,40}$/i;

/**
 * `diff ID [ID2] [--] PATH…`: operands after `--` are paths; before it, a second operand is ID2
 * when it looks like a snapshot id (7-40 hex digits), else the paths start there.
 */
function splitDiffArgs(command: Command): { id: string; id2?: string; paths: string[] } {
  const operands = command.args;
  // commander drops the `--` from the operands; where it stood is only in the raw arguments.
  const raw = (command.parent as { rawArgs?: string[] } | null)?.rawArgs ?? process.argv;
  const dashes = raw.indexOf("--");
  const afterDashes = dashes === -1 ? 0 : raw.length - dashes - 1;
  const before = operands.slice(0, operands.length - afterDashes);
  const paths = operands.slice(operands.length - afterDashes);
  const [id, ...rest] = before;
  if (rest.length > 0 && SNAPSHOT_ID.test(rest[0])) {
    const [id2, ...more] = rest;
    if (dashes !== -1 && more.length > 0) {
      throw new GhostcommitError("usage", "diff takes at most two snapshot ids before --");
    }
    return { id, id2, paths: [...more, ...paths] };
  }
  if (dashes !== -1 && rest.length > 0) {
    throw new GhostcommitError("usage", `not a snapshot id: ${humanPath(rest[0])} (paths go after --)`);
  }
  return { id, paths: [...rest, ...paths] };
}
