/** How long to wait for the agent to close stdin. */
const STDIN_TIMEOUT_MS = 5000;

/** Stdin read to its end, once per process, by whichever asks first (see `hookEventWithin`). */
interface Collected {
  chunks: Buffer[];
  /** Stdin's end came (not the timeout). */
  ended: boolean;
  /** Settles at the end, on an error, or at the timeout. */
  done: Promise<void>;
}
const COLLECTED = Symbol.for("ghostcommit.stdin");
const slot = globalThis as { [COLLECTED]?: Collected };

function collect(): Collected {
  const existing = slot[COLLECTED];
  if (existing) return existing;
  const collected: Collected = { chunks: [], ended: false, done: Promise.resolve() };
  slot[COLLECTED] = collected;
  if (process.stdin.isTTY) return collected; // a person at a terminal: no event is coming
  collected.done = new Promise((resolve) => {
    let settled = false;
    const finish = (ended: boolean) => {
      if (settled) return;
      settled = true;
      collected.ended = ended;
      clearTimeout(timer);
      process.stdin.destroy();
      resolve();
    };
    const timer = setTimeout(() => finish(false), STDIN_TIMEOUT_MS);
    process.stdin.on("data", (chunk: Buffer) => collected.chunks.push(chunk));
    process.stdin.on("end", () => finish(true));
    process.stdin.on("error", () => finish(false));
  });
  return collected;
}

/** Reads stdin to its end (or until the timeout): hooks get one JSON document. */
export async function readStdin(): Promise<string> {
  const collected = collect();
  await collected.done;
  return Buffer.concat(collected.chunks).toString("utf8");
}

/**
 * The hook's event if stdin has ended within `waitMs`, else null: the command-line loader looks
 * before loading the bundle, to know whether the event captures (an agent writes the event and
 * closes stdin as it starts the hook, so it is almost always there). Reading goes on either way,
 * for `readStdin`, without ever blocking the process: an agent that kept stdin open only costs
 * the wait.
 */
export async function hookEventWithin(waitMs: number): Promise<string | null> {
  const collected = collect();
  let timer: NodeJS.Timeout | undefined;
  // At the deadline the event may be waiting unread: a process kept off the CPU past it (a loaded
  // machine) runs its timers before it polls its input, and a socket's end comes a poll after its
  // data. So the wait ends at the first poll that brings nothing new.
  const deadline = new Promise<void>((resolve) => {
    const lastLook = (seen: number) => {
      const now = collected.chunks.length;
      if (now === seen) resolve();
      else setImmediate(() => lastLook(now));
    };
    timer = setTimeout(() => lastLook(-1), waitMs);
  });
  await Promise.race([collected.done, deadline]);
  clearTimeout(timer);
  return collected.ended ? Buffer.concat(collected.chunks).toString("utf8") : null;
}
