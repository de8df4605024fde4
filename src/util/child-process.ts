import type * as ChildProcess from "node:child_process";
import { createRequire } from "node:module";

let loaded: typeof ChildProcess | undefined;

/**
 * `node:child_process`, loaded when a process is first started instead of when the command-line
 * tool starts: most of an agent's tool-call hooks start none, and pay only for what they use.
 */
export function childProcess(): typeof ChildProcess {
  loaded ??=
    (process.getBuiltinModule?.("node:child_process") as typeof ChildProcess | undefined) ??
    (createRequire(import.meta.url)("node:child_process") as typeof ChildProcess);
  return loaded;
}
