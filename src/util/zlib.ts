import { createRequire } from "node:module";
import type * as Zlib from "node:zlib";

let loaded: typeof Zlib | undefined;

/**
 * `node:zlib`, loaded on its first use instead of when the command-line tool starts: a snapshot
 * compresses only once status has answered, so the module's load (1–3 ms on a slow machine) moves
 * from before status starts into the wait for it.
 */
export function zlib(): typeof Zlib {
  loaded ??=
    (process.getBuiltinModule?.("node:zlib") as typeof Zlib | undefined) ??
    (createRequire(import.meta.url)("node:zlib") as typeof Zlib);
  return loaded;
}
