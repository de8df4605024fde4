import type { StoreKind } from "../config.js";

/**
 * How the caller names the options an error's advice points to: a library user reads the
 * library's options, a command line user its flags (the command line sets its own, see `open`).
 */
export interface OptionNames {
  store(kind: StoreKind): string;
  includeIgnored: string;
  sessions: string;
}

export const LIBRARY_OPTION_NAMES: OptionNames = {
  store: (kind) => `openWorkspace({ store: "${kind}" })`,
  includeIgnored: "push({ includeIgnored: true })",
  sessions: "push({ sessions })",
};
