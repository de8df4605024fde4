import type { Command } from "commander";
import type { Action } from "../runner.js";

/** Session commands: turn, touch, sessions, log, rewind, redo. */
export function register(_program: Command, _run: Action): void {}
