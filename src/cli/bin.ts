import "./epipe.js";
import { runCli } from "./program.js";

// No top-level await: the bundle built from this file is a CommonJS script (see loader.ts).
runCli(process.argv).then((code) => {
  process.exitCode = code;
});
