import type { Command } from "commander";
import * as integrationCommands from "./commands/integration-commands.js";
import * as sessionCommands from "./commands/session-commands.js";
import * as syncCommands from "./commands/sync.js";
import * as ui from "./commands/ui.js";
import type { Action } from "./runner.js";

/** A module of commands: it adds them to the program. */
export interface CommandModule {
  register(program: Command, run: Action): void;
}

/** Commands added by later layers (sessions, integrations), by name, with the module that adds each. */
export const extraCommands: Record<string, CommandModule> = {
  turn: sessionCommands,
  touch: sessionCommands,
  sessions: sessionCommands,
  log: sessionCommands,
  rewind: sessionCommands,
  redo: sessionCommands,
  push: syncCommands,
  fetch: syncCommands,
  hook: integrationCommands,
  install: integrationCommands,
  uninstall: integrationCommands,
  mcp: integrationCommands,
  ui,
};
