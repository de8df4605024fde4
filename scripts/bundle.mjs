// Bundles the command-line tool into one file: Node 20 spends ~80 ms resolving and compiling
// dozens of ES modules, more than a snapshot's own work. The library (dist/index.js) stays unbundled.
import { chmodSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const dist = path.resolve("dist");

/**
 * Modules the CLI loads with `import()` (the MCP server, the rewind picker) stay outside the
 * bundle, loaded from dist/ on demand: bundled, their dependencies' imports would be hoisted and
 * paid for by every command.
 */
const keepDynamicImportsLazy = {
  name: "keep-dynamic-imports-lazy",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      const target = path.resolve(args.resolveDir, args.path);
      return { path: `./${path.relative(dist, target).split(path.sep).join("/")}`, external: true };
    });
  },
};

await build({
  entryPoints: ["dist/cli/bin.js"],
  outfile: "dist/ghostcommit.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*", "zod", "@clack/prompts"],
  plugins: [keepDynamicImportsLazy],
  banner: {
    js: "import { createRequire as __ghostcommitRequire } from 'node:module';\nconst require = __ghostcommitRequire(import.meta.url);",
  },
  logLevel: "warning",
});
chmodSync("dist/ghostcommit.mjs", 0o755);
