// Bundles the command-line tool into one file, dist/cli.cjs, run by a small loader (the bin,
// dist/ghostcommit.mjs) from V8's code cache: Node 20 spends ~80 ms resolving and compiling dozens
// of ES modules, and ~15 ms compiling even one bundle, against a snapshot's few milliseconds of
// work. The library (dist/index.js) stays unbundled.
import { createHash } from "node:crypto";
import { chmodSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const dist = path.resolve("dist");
const lazyModules = new Set();

/**
 * Modules the CLI loads with `import()` (the MCP server, the rewind picker, the web timeline) stay
 * outside the bundle, loaded from dist/ on demand: bundled, their dependencies' imports would be
 * hoisted and paid for by every command.
 */
const keepDynamicImportsLazy = {
  name: "keep-dynamic-imports-lazy",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      // The entry's own import() of the command line stays in the bundle, initialized on demand.
      if (args.importer === path.join(dist, "cli", "bin.js")) return undefined;
      const target = path.resolve(args.resolveDir, args.path);
      const relative = `./${path.relative(dist, target).split(path.sep).join("/")}`;
      lazyModules.add(relative);
      return { path: relative, external: true };
    });
  },
};

const shared = { bundle: true, platform: "node", target: "node20", logLevel: "warning" };

// The CLI itself: CommonJS, because V8 can cache the compiled form of a script (vm.Script) but Node
// 20 offers no such cache for an ES module. import.meta.url keeps meaning the bundle's own URL.
await build({
  ...shared,
  entryPoints: ["dist/cli/bin.js"],
  outfile: "dist/cli.cjs",
  format: "cjs",
  external: ["@modelcontextprotocol/server", "@modelcontextprotocol/server/*", "zod", "@clack/prompts"],
  plugins: [keepDynamicImportsLazy],
  // The loader passes the bundle's URL in (see src/cli/loader.ts); the version is written in.
  define: {
    "import.meta.url": "__ghostcommitUrl",
    __ghostcommitVersion: JSON.stringify(JSON.parse(readFileSync("package.json", "utf8")).version),
  },
  // Every command reads, hashes and hands V8 the whole bundle: without its whitespace and with
  // shorter syntax it is a third smaller, and a later snapshot ~8 ms faster on a slow machine.
  // Names stay as written, so a stack trace still reads.
  minifyWhitespace: true,
  minifySyntax: true,
});

// A script compiled by node:vm cannot import() without an experimental flag, so the bundle's
// import() calls go to the loader's own import(), passed in as __ghostcommitImport.
let cli = readFileSync("dist/cli.cjs", "utf8");
for (const specifier of lazyModules) {
  const call = `import(${JSON.stringify(specifier)})`;
  if (!cli.includes(call)) throw new Error(`bundle: ${call} not found in dist/cli.cjs`);
  cli = cli.replaceAll(call, `__ghostcommitImport(${JSON.stringify(specifier)})`);
}
if (/[^\w$.]import\(/.test(cli))
  throw new Error("bundle: dist/cli.cjs has an import() the loader cannot serve");

// esbuild's __toESM copies every export of a CommonJS module into a new object for each file that
// imports it: ~50 copies of node:path and node:os, ~2 ms of every command. One copy per
// module serves them all (each is a set of getters onto the module).
const toEsm = "var __toESM=(";
if (!cli.includes(toEsm)) throw new Error("bundle: esbuild's __toESM helper not found in dist/cli.cjs");
cli = cli.replace(
  toEsm,
  `var __toESMCache = new WeakMap();
var __toESM = (mod, isNodeMode) => {
  if (mod === null || (typeof mod !== "object" && typeof mod !== "function")) return __toESMCopy(mod, isNodeMode);
  let copies = __toESMCache.get(mod);
  if (!copies) __toESMCache.set(mod, (copies = []));
  return (copies[isNodeMode ? 1 : 0] ??= __toESMCopy(mod, isNodeMode));
};
var __toESMCopy=(`,
);
writeFileSync("dist/cli.cjs", cli);
// The loader names the code cache by this, instead of hashing the bundle at every start.
const bundleDigest = JSON.stringify(createHash("sha256").update(cli).digest("hex"));

// The bin (and the path installed hooks run): a small loader that runs dist/cli.cjs from its code
// cache. A CommonJS script: an ES module entry makes Node set up its module loader first (~3 ms on
// a quiet machine, ~10 ms on a slow one, in every command). Its import() calls stay real dynamic
// imports, which CommonJS has, since the lazy modules are ES modules.
await build({
  ...shared,
  entryPoints: ["dist/cli/loader.js"],
  outfile: "dist/ghostcommit.cjs",
  format: "cjs",
  supported: { "dynamic-import": true },
  define: { "import.meta.url": "__loaderUrl", __ghostcommitBundleDigest: bundleDigest },
  banner: { js: '"use strict";\nconst __loaderUrl = require("node:url").pathToFileURL(__filename).href;' },
});
chmodSync("dist/ghostcommit.cjs", 0o755);
// The same loader as an ES module, the entry that releases before this one installed in agents'
// hook files: those keep working until `install` is run again.
await build({
  ...shared,
  entryPoints: ["dist/cli/loader.js"],
  outfile: "dist/ghostcommit.mjs",
  format: "esm",
  define: { __ghostcommitBundleDigest: bundleDigest },
});
chmodSync("dist/ghostcommit.mjs", 0o755);

// The web timeline's page is served from files next to its server module.
cpSync("src/ui/static", "dist/ui/static", { recursive: true });
