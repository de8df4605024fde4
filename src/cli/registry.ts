import type { Command } from "commander";
import type { Action } from "./runner.js";

/** Commands added by later layers (sessions, integrations): each module exports `register`. */
export const extraCommands: { register(program: Command, run: Action): void }[] = [];
