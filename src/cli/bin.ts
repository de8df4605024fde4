import { guardOutput } from "./epipe.js";
import { isBareHookCall } from "./bare-hook.js";
import { runBareHook } from "./hook-entry.js";

// No top-level await: the bundle built from this file is a CommonJS script (see loader.ts). The
// command line (commander and every command) is set up only when the call is not an agent's hook.
const argv = process.argv;
const exitCode = isBareHookCall(argv) ? runBareHook(argv[3]) : runCommand(argv);
exitCode.then((code) => {
  process.exitCode = code;
});

function runCommand(line: string[]): Promise<number> {
  guardOutput();
  return import("./program.js").then((program) => program.runCli(line));
}
