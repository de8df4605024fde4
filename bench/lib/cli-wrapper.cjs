// Runs the ghostcommit CLI in this process and records this process's peak RSS (git children
// are separate processes and are not counted). Usage: node cli-wrapper.cjs <entry> <args...>
// CommonJS, like the entry it runs: an ES module here would add Node's module-loader set-up to
// every measured command.
const { writeFileSync } = require("node:fs");

const [main, ...args] = process.argv.slice(2);
process.argv = [process.argv[0], main, ...args];
const rssFile = process.env.BENCH_RSS_FILE;
if (rssFile) process.on("exit", () => writeFileSync(rssFile, String(process.resourceUsage().maxRSS)));
require(main);
