import { GhostcommitError } from "../errors.js";
import { runHook } from "../integrations/hook.js";
import { readStdin } from "../util/stdin.js";
import { markProcessShortLived } from "../util/detached.js";
import { trace } from "../util/trace.js";
import type { GlobalOptions } from "./context.js";

/**
 * A bare hook call (see `isBareHookCall`), answered without setting up the command line
 * (commander and every command's module), which an agent pays for at each of its tool calls.
 */
export async function runBareHook(agent: string): Promise<number> {
  trace("cli: loaded");
  markProcessShortLived();
  await runHookCommand(agent, () => ({}));
  return 0;
}

/**
 * One hook event from stdin. Whatever happens, the agent sees exit status 0; a bad global option
 * is reported and the default store used. `globals` reads the options (it may throw).
 */
export async function runHookCommand(
  agent: string | undefined,
  globals: () => GlobalOptions,
  fallbackDir?: string,
): Promise<void> {
  process.on("uncaughtException", (error) => {
    process.stderr.write(`ghostcommit hook: ${error.message}\n`);
  });
  process.on("exit", () => {
    process.exitCode = 0;
  });
  let options: GlobalOptions = {};
  try {
    options = globals();
  } catch (error) {
    const message = error instanceof GhostcommitError ? error.message : String(error);
    process.stderr.write(`ghostcommit hook: ${message}; using the default store\n`);
    options = { C: fallbackDir };
  }
  try {
    await runHook(agent, await readStdin(), { dir: options.C, store: options.store });
  } catch (error) {
    process.stderr.write(`ghostcommit hook: ${(error as Error).message}\n`);
  }
  process.exitCode = 0;
}
