import type * as Zlib from "node:zlib";
import { lazyBuiltin } from "./lazy-builtin.js";

/**
 * `node:zlib`, loaded on its first use: a snapshot compresses only once status has answered, so
 * the module's load (1–3 ms on a slow machine) moves from before status starts into the wait for it.
 */
export const zlib = lazyBuiltin<typeof Zlib>("node:zlib");
