// Bundles the command-line tool into one file: Node 20 spends ~80 ms resolving and compiling
// dozens of ES modules, more than a snapshot's own work. The library (dist/index.js) stays unbundled.
import { chmodSync } from "node:fs";
import { build } from "esbuild";

await build({
  entryPoints: ["dist/cli/main.js"],
  outfile: "dist/ghostcommit.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Loaded only by the commands that need them (mcp, the rewind picker).
  external: ["@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*", "zod", "@clack/prompts"],
  banner: {
    js: "import { createRequire as __ghostcommitRequire } from 'node:module';\nconst require = __ghostcommitRequire(import.meta.url);",
  },
  logLevel: "warning",
});
chmodSync("dist/ghostcommit.mjs", 0o755);
