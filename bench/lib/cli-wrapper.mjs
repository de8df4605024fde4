// Runs the ghostcommit CLI in this process and records this process's peak RSS (git children
// are separate processes and are not counted). Usage: node cli-wrapper.mjs <main.js> <args...>
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [main, ...args] = process.argv.slice(2);
process.argv = [process.argv[0], main, ...args];
const rssFile = process.env.BENCH_RSS_FILE;
if (rssFile) process.on("exit", () => writeFileSync(rssFile, String(process.resourceUsage().maxRSS)));
await import(pathToFileURL(main).href);
