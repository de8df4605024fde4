import type { Command } from "commander";
import type { Action } from "../runner.js";

/** Integration commands: hook, install, uninstall, mcp. */
export function register(_program: Command, _run: Action): void {}
