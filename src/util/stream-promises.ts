import type * as StreamPromises from "node:stream/promises";
import { lazyBuiltin } from "./lazy-builtin.js";

/**
 * `node:stream/promises`, loaded on its first use: only large files and damaged objects are
 * streamed, and loading it loads Node's streams (~2 ms), which a hook never otherwise needs.
 */
export const streamPromises = lazyBuiltin<typeof StreamPromises>("node:stream/promises");
