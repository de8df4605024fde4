import { explained } from "../errors.js";

/**
 * A reader that closed the pipe (`ghostcommit show ID | head -2`) has all it wanted: the rest of
 * the output is dropped, quietly, and the command ends with its own status (a failure still 1, a
 * refusal still 3), never a stack trace. Exiting at once would have reported them as 0.
 *
 * Output that could not be written otherwise (stdout on a full disk) fails the command with a
 * message: the command's work stands (a restore is done), only its report is lost. A failure of
 * stderr has nowhere to be told.
 *
 * Not for an agent's hook (see hook-entry.ts), which writes little, and whose any failure ends in
 * status 0 all the same: setting up `process.stdout` and `process.stderr` loads Node's streams and
 * sockets (~3 ms of every tool call).
 */
export function guardOutput(): void {
  let stdoutFailed = false;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || stdoutFailed) return;
    stdoutFailed = true;
    process.stderr.write(`ghostcommit: cannot write output: ${explained(error.code ?? error.message)}\n`);
  });
  process.stderr.on("error", () => {});
  process.on("exit", (code) => {
    if (stdoutFailed && code === 0) process.exitCode = 1;
  });
}
