import type { Command } from "commander";
import type { CommandOutput } from "./output.js";

/** Wraps a command body: the runner prints its output or its error with the right exit status. */
export type Action = (
  body: (command: Command) => Promise<CommandOutput>,
) => (...args: unknown[]) => Promise<void>;
