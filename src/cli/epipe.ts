import { explained } from "../errors.js";

/**
 * A reader that closed the pipe (`ghostcommit show ID | head -2`) has all it wanted: the command
 * ends quietly with status 0 instead of dying with a stack trace.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
  });
}

/**
 * Output that could not be written (stdout on a full disk) fails the command with a message, not a
 * stack trace: the command's work stands (a restore is done), only its report is lost. A failure
 * of stderr has nowhere to be told.
 */
let stdoutFailed = false;
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE" || stdoutFailed) return;
  stdoutFailed = true;
  process.stderr.write(`ghostcommit: cannot write output: ${explained(error.code ?? error.message)}\n`);
});
process.on("exit", (code) => {
  if (stdoutFailed && code === 0) process.exitCode = 1;
});
