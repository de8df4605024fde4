import { existsSync, readdirSync, readFileSync } from "node:fs";
import { openWorkspace, type Workspace } from "../../src/workspace.js";
import type { StoreKind } from "../../src/config.js";
import { checkInstalledHooks } from "../../src/integrations/installed-hooks.js";
import type { Snapshot, SnapshotOptions } from "../../src/types.js";
import type { Sandbox } from "./repo.js";

// Reading a store through the library in this process, where what a store holds is a test's
// check rather than its subject: the reading commands' `--json` prints what these return (the
// command line's own output has tests of its own), and a command line run costs ~0.2 s of CPU,
// most of it Node's start.

interface Place {
  sandbox: Sandbox;
  dir: string;
}

/** Opens a workspace in-process with the sandbox's hermetic environment. */
export async function openIn(sandbox: Sandbox, dir: string, store?: StoreKind): Promise<Workspace> {
  sandbox.applyToProcess();
  return openWorkspace(store ? { cwd: dir, store } : { cwd: dir });
}

/**
 * What `read` returns from the workspace at `place`, as the command line's JSON has it (no
 * undefined fields, dates as strings), once the git processes it started have ended.
 */
async function readIn(place: Place, read: (ws: Workspace) => Promise<unknown>): Promise<any> {
  return settled(async () => JSON.parse(JSON.stringify(await read(await openIn(place.sandbox, place.dir)))));
}

/** What `ghostcommit list --json` prints. */
export const listIn = (place: Place): Promise<any[]> => readIn(place, (ws) => ws.list());

/** What `ghostcommit show <id> --json` prints. */
export const showIn = (place: Place, id: string): Promise<any> => readIn(place, (ws) => ws.show(id));

/** What `ghostcommit log --session <id> --json` prints (turns whose snapshots are gone say so). */
export const logIn = (place: Place, session: string): Promise<any[]> =>
  readIn(place, (ws) => ws.session(session).log({ gone: true }));

/** What `ghostcommit doctor --json` prints (`--repair` with `repair`), the same checks made. */
export const doctorIn = (place: Place, repair = false): Promise<any> =>
  readIn(place, (ws) => ws.doctor({ repair, checks: [checkInstalledHooks] }));

/**
 * Takes a snapshot through the library in this process (what the `snapshot` command calls), the
 * workspace opened afresh as each command run opens it. Where a store's snapshots are a test's
 * setting rather than its subject: a command line run costs several times as much.
 */
export async function snapshotIn(
  place: Place,
  options?: SnapshotOptions,
  store?: StoreKind,
): Promise<Snapshot> {
  return settled(async () => (await openIn(place.sandbox, place.dir, store)).snapshot(options));
}

/**
 * Runs `work`, then waits for the git processes it started to end (its `cat-file --batch` is
 * ended, not waited for): as after a command line run, a command that follows must find no live
 * git in the store (doctor and gc leave alone what a live git may be writing). Those it started,
 * not a server or daemon the test runs.
 */
export async function settled<T>(work: () => Promise<T>): Promise<T> {
  const running = new Set(childProcesses());
  const result = await work();
  for (const end = Date.now() + 10_000; Date.now() < end; ) {
    if (childProcesses().every((pid) => running.has(pid))) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return result;
}

/**
 * The live child processes of this process: each thread's `children` file, where the kernel keeps
 * one (a scan of every process's `stat` costs ~10 ms of CPU here, and the suite waits thousands
 * of times), else that scan.
 */
function childProcesses(): string[] {
  if (process.platform !== "linux") return [];
  if (existsSync(`/proc/self/task/${process.pid}/children`)) {
    return readdirSync("/proc/self/task").flatMap((task) => {
      try {
        return readFileSync(`/proc/self/task/${task}/children`, "latin1").split(" ").filter(Boolean);
      } catch {
        return []; // a thread that ended meanwhile
      }
    });
  }
  return readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    let stat = "";
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    } catch {
      return false; // gone meanwhile
    }
    // pid (comm) state ppid: the command name may hold spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid;
  });
}
