/**
 * A reader that closed the pipe (`ghostcommit show ID | head -2`) has all it wanted: the command
 * ends quietly with status 0 instead of dying with a stack trace.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}
