import type { Command } from "commander";
import * as integrationCommands from "./commands/integration-commands.js";
import * as sessionCommands from "./commands/session-commands.js";
import * as syncCommands from "./commands/sync.js";
import type { Action } from "./runner.js";

/** Commands added by later layers (sessions, integrations): each module exports `register`. */
export const extraCommands: { register(program: Command, run: Action): void }[] = [
  sessionCommands,
  syncCommands,
  integrationCommands,
];
