import { openWorkspace, type Workspace } from "../../src/workspace.js";
import type { StoreKind } from "../../src/config.js";
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

/** As the command line's JSON has it: no undefined fields, dates as strings. */
function asPrinted<T>(value: T): any {
  return JSON.parse(JSON.stringify(value));
}

/** What `ghostcommit list --json` prints. */
export async function listIn(place: Place): Promise<any[]> {
  return asPrinted(await (await openIn(place.sandbox, place.dir)).list());
}

/** What `ghostcommit show <id> --json` prints. */
export async function showIn(place: Place, id: string): Promise<any> {
  return asPrinted(await (await openIn(place.sandbox, place.dir)).show(id));
}

/** What `ghostcommit log --session <id> --json` prints (turns whose snapshots are gone say so). */
export async function logIn(place: Place, session: string): Promise<any[]> {
  return asPrinted(await (await openIn(place.sandbox, place.dir)).session(session).log({ gone: true }));
}
