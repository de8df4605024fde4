// Times one library call inside a process that has already started Node and loaded the library,
// as an agent embedding ghostcommit (or the MCP server) sees it. Usage:
//   node in-process.mjs <dist/index.js> <workspace> snapshot [EDITS.json]
// With EDITS.json (a list of workspace-relative paths), the process first takes an untimed
// snapshot (a running process has run its code before), then appends a line to each of those
// files and times the next snapshot; without it, the first call in a fresh process is timed.
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { backgroundBuildMs } from "./ghostcommit.mjs";

const [index, root, op, editsFile] = process.argv.slice(2);
const { openWorkspace } = await import(pathToFileURL(index).href);
const ws = await openWorkspace({ cwd: root });
if (op !== "snapshot") throw new Error(`unknown operation ${op}`);
if (editsFile) {
  await ws.snapshot();
  backgroundBuildMs(process.env.GHOSTCOMMIT_HOME);
  for (const rel of JSON.parse(readFileSync(editsFile, "utf8"))) {
    appendFileSync(path.join(root, rel), `// edited in the running process ${process.pid}\n`);
  }
}
const start = performance.now();
await ws.snapshot();
process.stdout.write(JSON.stringify({ ms: performance.now() - start }));
