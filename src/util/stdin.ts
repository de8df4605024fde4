import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";

/** How long to wait for the agent to close stdin. */
const STDIN_TIMEOUT_MS = 5000;

/** What the command-line loader read of stdin before the bundle loaded (see `readStdinNow`). */
interface Preread {
  bytes: Buffer;
  /** Stdin's end was reached: nothing more to read. */
  ended: boolean;
}
const PREREAD = Symbol.for("ghostcommit.stdinPreread");
const slot = globalThis as { [PREREAD]?: Preread };

/**
 * Reads what stdin holds now, without waiting: an agent writes a hook's event and closes stdin as
 * it starts the hook, so by the time the loader runs the whole event is usually there. Read
 * through a second, non-blocking description of the same pipe (`/proc/self/fd/0`, so Linux
 * only): an agent that never closed stdin must not hang the hook here, where no timeout could
 * end the wait. What was read is handed to `readStdin`, which reads the rest, if any. Null where
 * nothing could be read this way (a terminal, a socket, no `/proc`).
 */
export function readStdinNow(): Preread | null {
  let fd: number;
  try {
    if (!fstatSync(0).isFIFO() || !existsSync("/proc/self/fd/0")) return null;
    fd = openSync("/proc/self/fd/0", constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  const chunks: Buffer[] = [];
  let ended = false;
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) {
        ended = true;
        break;
      }
      chunks.push(chunk.subarray(0, read));
    }
  } catch {
    // EAGAIN: the rest is not written yet, and readStdin waits for it
  } finally {
    closeSync(fd);
  }
  const preread = { bytes: Buffer.concat(chunks), ended };
  slot[PREREAD] = preread;
  return preread;
}

/** Reads stdin to its end (or until the timeout): hooks get one JSON document. */
export function readStdin(timeoutMs = STDIN_TIMEOUT_MS): Promise<string> {
  const preread = slot[PREREAD];
  slot[PREREAD] = undefined;
  if (preread?.ended) return Promise.resolve(preread.bytes.toString("utf8"));
  if (process.stdin.isTTY) return Promise.resolve("");
  return new Promise((resolve) => {
    const chunks: Buffer[] = preread ? [preread.bytes] : [];
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
