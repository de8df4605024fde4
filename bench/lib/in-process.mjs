// Times one library call inside a process that has already started Node and loaded the library,
// as an agent embedding ghostcommit (or the MCP server) sees it. Usage:
//   node in-process.mjs <dist/index.js> <workspace> snapshot
import { pathToFileURL } from "node:url";

const [index, root, op] = process.argv.slice(2);
const { openWorkspace } = await import(pathToFileURL(index).href);
const ws = await openWorkspace({ cwd: root });
if (op !== "snapshot") throw new Error(`unknown operation ${op}`);
const start = performance.now();
await ws.snapshot();
process.stdout.write(JSON.stringify({ ms: performance.now() - start }));
