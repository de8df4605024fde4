import { writeFileSync } from "node:fs";
import type * as Net from "node:net";
import path from "node:path";
import { fsmonitorToken } from "../git/index-file.js";
import { shellQuote } from "../util/shell.js";
import { lazyBuiltin } from "../util/lazy-builtin.js";
import { trace } from "../util/trace.js";
import { type BserValue, decodePdu, encodePdu, pduLength } from "./bser.js";

const net = lazyBuiltin<typeof Net>("node:net");

/**
 * Watchman's answer asked for ahead of status, over Watchman's socket, by this process: git then
 * gets it from a one-line hook that prints a file, instead of starting Perl, which starts the
 * `watchman` client (~30 ms inside status on a slow machine, against ~5 ms for the socket, spent
 * before status starts). Asked only where the private index carries a Watchman clock (the hook
 * script handles every other case: a first query, a lost watch); any doubt about the answer
 * leaves the question to that script.
 */

const ANSWER_FILE = "fsmonitor-answer";
const CLOCK = /^c:[0-9:]+$/;
const QUERY_TIMEOUT_MS = 5_000;

/** What answerAhead finds where nothing listens on Watchman's socket: its daemon is gone. */
export const NO_DAEMON = Symbol("no daemon");
/** What answerAhead finds where the daemon runs but no longer watches the root (`watch-del`). */
export const NOT_WATCHED = Symbol("not watched");

/**
 * The hook-protocol answer, for git's fsmonitor hook command; null: let the hook script ask;
 * NO_DAEMON: nothing listens on the socket (the daemon stopped, was killed, a reboot);
 * NOT_WATCHED: the daemon answers but the watch is gone. Both are found before status, so this
 * snapshot can watch again (the hook script only finds out inside status, too late for it).
 */
export async function answerAhead(
  socket: string,
  root: string,
  indexFile: string,
  answerDir: string,
): Promise<string | null | typeof NO_DAEMON | typeof NOT_WATCHED> {
  const since = fsmonitorToken(indexFile);
  if (since === null || !CLOCK.test(since)) {
    // No clock to ask from (the hook script asks for one): only whether the daemon watches the root.
    const reply = await ask(socket, ["clock", root]);
    return reply === NO_DAEMON ? NO_DAEMON : notWatched(reply) ? NOT_WATCHED : null;
  }
  const reply = await ask(socket, [
    "query",
    root,
    {
      since,
      fields: ["name"],
      empty_on_fresh_instance: true,
      expression: ["not", ["dirname", ".git"]],
    },
  ]);
  if (reply === NO_DAEMON) return NO_DAEMON;
  if (notWatched(reply)) return NOT_WATCHED;
  const answer = reply ? answerOf(reply) : null;
  if (!answer) return null;
  const file = path.join(answerDir, ANSWER_FILE);
  writeFileSync(file, answer, { mode: 0o600 });
  trace(`capture: Watchman asked ahead, ${answer.length} bytes`);
  // git runs it as `sh -c '<this> "$@"' <this> 2 <token>`: an answer is given for its token only,
  // else the hook fails and git checks every file itself.
  return `[ "$2" = ${shellQuote(since)} ] && exec cat ${shellQuote(file)} #`;
}

/** Whether a reply is Watchman's refusal of a root it does not watch. */
function notWatched(reply: BserValue): boolean {
  if (typeof reply !== "object" || reply === null || Array.isArray(reply) || Buffer.isBuffer(reply))
    return false;
  const error = reply.error;
  return Buffer.isBuffer(error) && error.toString("utf8").includes("is not watched");
}

/** The name of the answer file in the throw-away git directory (removed with it). */
export const FSMONITOR_ANSWER_FILE = ANSWER_FILE;

/** Hook protocol 2: the new clock, NUL, then the changed paths NUL-separated ("/": everything). */
function answerOf(reply: BserValue): Buffer | null {
  if (typeof reply !== "object" || reply === null || Array.isArray(reply) || Buffer.isBuffer(reply))
    return null;
  const { clock, files, is_fresh_instance: fresh, error } = reply as Record<string, BserValue>;
  if (error !== undefined || !Buffer.isBuffer(clock) || !CLOCK.test(clock.toString("latin1"))) return null;
  if (fresh === true) return Buffer.concat([clock, Buffer.from("\0/")]);
  if (!Array.isArray(files) || !files.every((name) => Buffer.isBuffer(name))) return null;
  const parts: Buffer[] = [clock];
  for (const name of files as Buffer[]) parts.push(NUL, name);
  return Buffer.concat(parts);
}

const NUL = Buffer.from([0]);

/** One request on Watchman's socket; its reply, NO_DAEMON, or null (an error, too slow, garbled). */
async function ask(socket: string, request: unknown): Promise<BserValue | typeof NO_DAEMON> {
  return new Promise((resolve) => {
    let received: Buffer = Buffer.alloc(0);
    const connection = net().createConnection(socket);
    const done = (value: BserValue | typeof NO_DAEMON) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), QUERY_TIMEOUT_MS);
    // No socket file, or one nobody listens on: a daemon that is gone.
    connection.on("error", (error: NodeJS.ErrnoException) =>
      done(error.code === "ENOENT" || error.code === "ECONNREFUSED" ? NO_DAEMON : null),
    );
    connection.on("connect", () => connection.write(encodePdu(request)));
    connection.on("data", (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      // Unilateral messages (subscriptions) are never sent on a connection that made none.
      try {
        const length = pduLength(received);
        if (length !== null && received.length >= length) done(decodePdu(received.subarray(0, length)));
      } catch {
        done(null);
      }
    });
    connection.on("end", () => done(null));
  });
}
