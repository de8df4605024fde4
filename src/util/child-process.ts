import type * as ChildProcess from "node:child_process";
import { lazyBuiltin } from "./lazy-builtin.js";

/**
 * `node:child_process`, loaded when a process is first started: most of an agent's tool-call hooks
 * start none, and pay only for what they use.
 */
export const childProcess = lazyBuiltin<typeof ChildProcess>("node:child_process");
