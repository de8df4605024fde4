import { realpathSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { openWorkspace, type Workspace } from "../workspace.js";
import { checkStoreKind, type StoreKind } from "../config.js";
import { GhostcommitError } from "../errors.js";
import { resolveNamedPaths } from "../restore/path-filter.js";
import { currentDirectory } from "../paths.js";
import { refuseNotUtf8 } from "./raw-args.js";
import { shellWord } from "../util/shell.js";
import { COMMAND_LINE_OPTION_NAMES } from "../store/option-names.js";

/** Options every command accepts, before or after its name. */
export interface GlobalOptions {
  C?: string;
  store?: StoreKind;
  json?: boolean;
}

/**
 * A command line for a hint ("undo with: ..."), reaching the same workspace and store as the one
 * that printed it: `-C` (made absolute) and `--store` as given.
 */
export function commandHint(globals: GlobalOptions, rest: string): string {
  const words = ["ghostcommit"];
  if (globals.C !== undefined) words.push("-C", shellWord(path.resolve(globals.C)));
  if (globals.store !== undefined) words.push("--store", globals.store);
  return `${words.join(" ")} ${rest}`;
}

/** Declares the global options on a command (commander only sees a parent's options before the command name). */
export function withGlobals(command: Command): Command {
  return command
    .option("-C <dir>", "workspace directory (default: current directory)")
    .option("--store <kind>", "where snapshots live: shadow or repo")
    .option("--json", "print one JSON document on stdout");
}

export function globalsOf(command: Command): GlobalOptions {
  const options = command.optsWithGlobals() as GlobalOptions;
  checkStoreKind(options.store, "--store");
  // `-C "$DIR"` with DIR unset would act on the current directory, a workspace nobody named.
  if (options.C === "") throw new GhostcommitError("usage", "-C needs a directory, not an empty string");
  if (options.C !== undefined)
    refuseNotUtf8([options.C], "run ghostcommit from inside that directory instead");
  return options;
}

/**
 * Checks the paths a command is limited to before the workspace is opened, so a path outside it
 * fails as a usage error having written nothing (not even a new store). Returns them as given.
 */
export function checkNamedPaths(options: GlobalOptions, paths: string[]): string[] | undefined {
  if (paths.length === 0) return undefined;
  refuseNotUtf8(paths, "name its directory instead: that covers every path below it");
  let root: string;
  try {
    root = realpathSync(options.C ?? currentDirectory());
  } catch {
    return paths; // opening the workspace reports the bad directory
  }
  resolveNamedPaths(root, paths);
  return paths;
}

/** The command line's names for the options an error's advice points to. */
export async function open(options: GlobalOptions): Promise<Workspace> {
  const ws = await openWorkspace({ cwd: options.C, store: options.store });
  ws.engine.optionNames = COMMAND_LINE_OPTION_NAMES;
  return ws;
}

/**
 * `open` for a command that captures the workspace (a snapshot, a turn, a restore's safety
 * snapshot, a diff against the files): the home or root directory is refused, as the hooks and
 * the MCP server refuse it, since a snapshot there would hold everything the user owns.
 */
export async function openToCapture(options: GlobalOptions): Promise<Workspace> {
  const ws = await open(options);
  // Before anything else the command does; the library refuses it too, at the capture itself.
  ws.engine.assertCapturable("run ghostcommit in a project directory, or give -C one");
  return ws;
}

/** Parses a duration such as 7d, 12h, 30m, 2w or 45s into milliseconds. */
export function parseDuration(text: string): number {
  // Zero is zero in any unit: `--older-than 0` means the same as `0d`.
  if (/^0+(\.0+)?$/.test(text.trim())) return 0;
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (!match) throw new GhostcommitError("usage", `not a duration: ${text} (use e.g. 7d, 12h, 30m)`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[match[2] as "s" | "m" | "h" | "d" | "w"];
  return Number(match[1]) * unit * 1000;
}

export function parseCount(text: string, name: string): number {
  if (!/^\d+$/.test(text))
    throw new GhostcommitError("usage", `${name} must be a whole number, not "${text}"`);
  return Number(text);
}
