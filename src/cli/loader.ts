#!/usr/bin/env node
import { closeSync, fstatSync, openSync, readFileSync, type Stats } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { startStatusAhead } from "../capture/status-ahead.js";
import { capturesWholeWorkspace } from "../integrations/hook-event.js";
import { hookEventWithin } from "../util/stdin.js";
import { isBareHookCall } from "./bare-hook.js";
import { trace } from "../util/trace.js";
import { CODE_CACHE_OFF, codeCacheFile, readCodeCache, WRITING_RUNS, writeCodeCache } from "./code-cache.js";

/**
 * The command-line entry (dist/ghostcommit.cjs, the bin and the path installed hooks run; built
 * also as dist/ghostcommit.mjs, which earlier releases installed). It runs the bundled CLI, a
 * CommonJS script next to it, compiled from V8's code cache when there is one. The cache is
 * written when a successful command exits, after its output, by the first few runs only.
 */
/** The bundle's SHA-256, defined when the loader is bundled with it (scripts/bundle.mjs). */
declare const __ghostcommitBundleDigest: string | undefined;

/**
 * How long a hook waits for its event before loading the bundle without it. Agents write the
 * event and close stdin as they start the hook, so it is there at once; one that is not only
 * starts no status ahead (the hook reads it all the same).
 */
const HOOK_EVENT_WAIT_MS = 10;

// A snapshot's status (a restore's safety snapshot's, a turn's) runs while the bundle loads (see
// capture/status-ahead.ts). An agent's hook says on stdin which event came, and so whether it
// captures: the event is looked at first.
const argv = process.argv.slice(2);
if (isBareHookCall(process.argv)) {
  void hookEventWithin(HOOK_EVENT_WAIT_MS).then((event) => {
    startStatusAhead(argv, event !== null && capturesWholeWorkspace(process.argv[3], event));
    runBundle();
  });
} else {
  startStatusAhead(argv);
  runBundle();
}

function runBundle(): void {
  const url = new URL("./cli.cjs", import.meta.url);
  const bundle = fileURLToPath(url);
  const bundleFd = openSync(bundle, "r");
  const bundleStat = fstatSync(bundleFd);
  const source = readFileSync(bundleFd);
  closeSync(bundleFd);
  // Only where files have owners to check (not on Windows).
  const file = process.env[CODE_CACHE_OFF] || !process.getuid ? undefined : cacheFileOf(source, bundleStat);
  const cache = file ? readCodeCache(file) : "absent";
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname, __ghostcommitUrl, __ghostcommitImport) {${source.toString("utf8")}\n})`,
    { filename: bundle, cachedData: typeof cache === "object" ? cache.data : undefined },
  );
  if (file) {
    const used = typeof cache === "object" && !script.cachedDataRejected;
    trace(`cli: code cache ${typeof cache === "object" ? (used ? "accepted" : "rejected") : cache}`);
    const runs = used ? cache.runs : 0;
    if (runs < WRITING_RUNS) {
      process.once("exit", (code) => {
        if (code !== 0) return;
        try {
          if (writeCodeCache(file, { data: script.createCachedData(), runs: runs + 1 }))
            trace(`cli: code cache written (run ${runs + 1} of ${WRITING_RUNS})`);
        } catch {
          // the command's outcome stands; the next run writes it
        }
      });
    }
  }
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    path.dirname(bundle),
    url.href,
    // The modules kept outside the bundle: a vm script cannot import() them itself.
    (specifier: string) => import(new URL(specifier, url).href),
  );
}

/** The cache file, or none when the data directory cannot even be named (no home directory). */
function cacheFileOf(source: Buffer, bundleStat: Stats): string | undefined {
  try {
    const built =
      typeof __ghostcommitBundleDigest === "string"
        ? { digest: __ghostcommitBundleDigest, size: bundleStat.size, mtimeMs: bundleStat.mtimeMs }
        : undefined;
    return codeCacheFile(source, built, isBareHookCall(process.argv) ? "hook" : "command");
  } catch {
    return undefined;
  }
}
