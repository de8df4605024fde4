/** How long to wait for the agent to close stdin. */
const STDIN_TIMEOUT_MS = 5000;

/** Reads stdin to its end (or until the timeout): hooks get one JSON document. */
export function readStdin(timeoutMs = STDIN_TIMEOUT_MS): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve("");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      process.stdin.destroy();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(finish, timeoutMs);
    process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on("end", finish);
    process.stdin.on("error", finish);
  });
}
