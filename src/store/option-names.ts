import type { StoreKind } from "../config.js";

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
}

export const LIBRARY_OPTION_NAMES: OptionNames = {
  store: (kind) => `openWorkspace({ store: "${kind}" })`,
  includeIgnored: "push({ includeIgnored: true })",
  sessions: "push({ sessions })",
  workspace: (dir) => `openWorkspace({ cwd: ${JSON.stringify(dir)} })`,
};

/** The command line's flags, also in what a background push records for `doctor` to show. */
export const COMMAND_LINE_OPTION_NAMES: OptionNames = {
  store: (kind) => `--store ${kind}`,
  includeIgnored: "--include-ignored",
  sessions: "--session",
  workspace: (dir) => `-C ${dir}`,
};
