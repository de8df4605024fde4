import type { StoreKind } from "../config.js";
import { shellWord } from "../util/shell.js";

/**
 * How the caller names the options an error's advice points to: a library user reads the
 * library's options, a command line user its flags (the command line sets its own, see `open`).
 */
export interface OptionNames {
  store(kind: StoreKind): string;
  includeIgnored: string;
  sessions: string;
  /** The workspace at `dir` (a repository's root, from a subdirectory's). */
  workspace(dir: string): string;
  /** What finishes, or undoes, a rewind of `session` to turn `to` that was interrupted (`withPaths`: it named paths). */
  interruptedRewind(session: string, to: string, withPaths: boolean): string;
}

export const LIBRARY_OPTION_NAMES: OptionNames = {
  store: (kind) => `openWorkspace({ store: "${kind}" })`,
  includeIgnored: "push({ includeIgnored: true })",
  sessions: "push({ sessions })",
  workspace: (dir) => `openWorkspace({ cwd: ${JSON.stringify(dir)} })`,
  interruptedRewind: (_session, to, withPaths) =>
    `\`session.rewind({ to: ${JSON.stringify(to)}${withPaths ? ", paths" : ""} })\`${withPaths ? " with the same paths" : ""} finishes it, \`session.redo()\` puts back the files as before it`,
};

/** The command line's flags, also in what a background push records for `doctor` to show. */
export const COMMAND_LINE_OPTION_NAMES: OptionNames = {
  store: (kind) => `--store ${kind}`,
  includeIgnored: "--include-ignored",
  sessions: "--session",
  workspace: (dir) => `-C ${dir}`,
  interruptedRewind: (session, to, withPaths) =>
    `\`ghostcommit rewind --session ${shellWord(session)} --to ${shellWord(to)}\`${withPaths ? " with the same paths" : ""} finishes it, \`ghostcommit redo --session ${shellWord(session)}\` puts back the files as before it`,
};
