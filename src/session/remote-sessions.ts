import { sha256Hex } from "../util/sha256.js";
import os from "node:os";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { runGit } from "../git/exec.js";
import { MODE, serializeCommit, serializeTree } from "../git/objects.js";
import { LooseObjectWriter } from "../git/loose-objects.js";
import { isPlainObject, readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { fetchRefs, type ResolvedRemote, remoteNamespace } from "../store/remote.js";
import type { StoredSnapshot } from "../store/store.js";
import type { SessionOrigin } from "../types.js";
import { withLock } from "../util/lock.js";
import { Journal } from "./journal.js";
import type { SessionState } from "./model.js";

/**
 * How sessions travel: each session is one ref on the remote, `<namespace>sessions/<name>`
 * (`name` is the journal's file name, a hash of the session id), pointing at a commit whose tree
 * holds the journal as it was pushed and the pushing machine's name. A later push of the same
 * session is a child commit (the journal is append-only, so the old one is a prefix of the new):
 * a journal that does not extend the remote one is another machine's session under the same id.
 */

/** The journal file's base name for a session (also its ref name on remotes). */
export function journalName(engine: StoreContext, session: string): string {
  return path.basename(new Journal(engine.paths.sessionsDir, session).file, ".jsonl");
}

export function remoteSessionRef(engine: StoreContext, name: string): string {
  return `${remoteNamespace(engine.location)}sessions/${name}`;
}

export function remoteSnapshotRef(engine: StoreContext, id: string): string {
  return `${remoteNamespace(engine.location)}snapshots/${id}`;
}

/**
 * Where the session commits of one remote are kept here (one namespace per remote URL): a fetch
 * reads back only that remote's, and a push keeps what it sent beside them.
 */
export function trackingPrefix(engine: StoreContext, remote: ResolvedRemote): string {
  const key = sha256Hex(remote.url).slice(0, 16);
  return engine.refs.refPrefix.replace(/snapshots\/$/, `remote-sessions/${key}/`);
}

/** Serializes transfers of one store: a background push and a manual one never race. */
export function withSyncLock<T>(engine: StoreContext, work: () => Promise<T>): Promise<T> {
  return withLock(path.join(engine.paths.dir, STORE_FILES.syncLock), work);
}

/** Writes a session commit (journal + pushing host) whose parent is the remote's previous one. */
export async function writeSessionCommit(
  engine: StoreContext,
  journal: Buffer,
  parent: string | null,
): Promise<string> {
  const writer = new LooseObjectWriter(engine.refs.objectsDir);
  const journalBlob = await writer.write("blob", journal);
  const originBlob = await writer.write("blob", Buffer.from(`${JSON.stringify({ host: os.hostname() })}\n`));
  const tree = await writer.write(
    "tree",
    serializeTree([
      { mode: MODE.file, name: "journal.jsonl", oid: journalBlob },
      { mode: MODE.file, name: "origin.json", oid: originBlob },
    ]),
  );
  const body = serializeCommit({
    tree,
    parents: parent ? [parent] : [],
    time: Math.floor(Date.now() / 1000),
    message: "ghostcommit session journal\n",
  });
  return writer.write("commit", body);
}

/** The journal and pushing host a session commit holds. */
export async function readSessionCommit(
  engine: StoreContext,
  oid: string,
): Promise<{ journal: Buffer; host: string }> {
  const read = (file: string) =>
    runGit(["cat-file", "blob", `${oid}:${file}`], {
      cwd: engine.paths.dir,
      env: engine.readEnv,
      okCodes: [0, 128],
    });
  const [journal, origin] = await Promise.all([read("journal.jsonl"), read("origin.json")]);
  let host = "unknown";
  try {
    const parsed = JSON.parse(origin.stdout.toString("utf8")) as { host?: unknown };
    if (typeof parsed.host === "string") host = parsed.host;
  } catch {
    // an origin note is informative only
  }
  return { journal: journal.code === 0 ? journal.stdout : Buffer.alloc(0), host };
}

/** Fetches the remote's session commits into the tracking refs (journals are tiny). */
export function fetchSessionCommits(engine: StoreContext, remote: ResolvedRemote): Promise<number> {
  const ns = remoteNamespace(engine.location);
  return fetchRefs(engine.refs.refsGitDir, remote, [`+${ns}sessions/*:${trackingPrefix(engine, remote)}*`]);
}

/**
 * What the store keeps of a fetched session's origin: the origin, and which of its journal's
 * records came in by fetches (`[from, to)` record positions), so what another machine did (a
 * rewind of its own files) is never told to this machine's agent as done here.
 */
type StoredOrigin = SessionOrigin & { received?: [number, number][] };

function originsFile(engine: StoreContext): string {
  return path.join(engine.paths.dir, STORE_FILES.remoteSessions);
}

/**
 * Records where a fetched session came from, so `sessions` can say so, and the records the fetch
 * brought (`received`), beside those earlier fetches brought (called under the sync lock).
 */
export async function recordOrigins(
  engine: StoreContext,
  origins: Record<string, SessionOrigin & { received?: [number, number] }>,
): Promise<void> {
  if (Object.keys(origins).length === 0) return;
  const file = originsFile(engine);
  const known = await readJson<Record<string, StoredOrigin>>(file, {});
  const merged: Record<string, StoredOrigin> = { ...known };
  for (const [session, { received, ...origin }] of Object.entries(origins)) {
    const before = receivedOf(known[session]);
    merged[session] = received
      ? { ...origin, received: [...before, received] }
      : { ...origin, received: before };
  }
  await writeFileAtomic(file, `${JSON.stringify(merged, null, 2)}\n`);
}

function receivedOf(stored: unknown): [number, number][] {
  const list = isPlainObject(stored) ? (stored as { received?: unknown }).received : undefined;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (range): range is [number, number] =>
      Array.isArray(range) && range.length === 2 && range.every((n) => Number.isInteger(n) && n >= 0),
  );
}

/** Origins of fetched sessions, by session id. */
export async function readOrigins(engine: StoreContext): Promise<Map<string, SessionOrigin>> {
  const known = await readJson<Record<string, unknown>>(originsFile(engine), {});
  const out = new Map<string, SessionOrigin>();
  for (const [session, value] of Object.entries(known)) {
    const origin = value as SessionOrigin;
    if (isPlainObject(value) && typeof origin.remote === "string" && typeof origin.host === "string") {
      out.set(session, { remote: origin.remote, host: origin.host, fetchedAt: origin.fetchedAt });
    }
  }
  return out;
}

/** The positions of a session's journal records that fetches brought from other machines. */
export async function receivedRecords(engine: StoreContext, session: string): Promise<[number, number][]> {
  const known = await readJson<Record<string, unknown>>(originsFile(engine), {});
  return Object.hasOwn(known, session) ? receivedOf(known[session]) : [];
}

/** Every snapshot a session's journal names, and every snapshot stamped with the session. */
export function sessionSnapshotIds(
  state: SessionState,
  records: unknown[],
  snapshots: StoredSnapshot[],
): string[] {
  const ids = new Set<string>();
  for (const turn of state.turns) {
    ids.add(turn.before);
    if (turn.after) ids.add(turn.after);
  }
  for (const record of records as Record<string, unknown>[]) {
    for (const key of ["before", "after", "to", "safety"]) {
      const value = record[key];
      if (typeof value === "string" && /^[0-9a-f]{40}$/.test(value)) ids.add(value);
    }
  }
  for (const s of snapshots) if (s.meta.session === state.session) ids.add(s.id);
  const listed = new Set(snapshots.map((s) => s.id));
  return [...ids].filter((id) => listed.has(id));
}

/**
 * A journal's complete records: a torn last line (a write cut off) never happened, so push and
 * fetch compare journals without it (fetch took a local torn tail for another history).
 */
export function completeRecords(journal: Buffer): Buffer {
  return journal.subarray(0, journal.lastIndexOf(0x0a) + 1);
}

/** Whether `prefix` is a byte prefix of `whole`. */
export function extendsJournal(whole: Buffer, prefix: Buffer): boolean {
  return whole.length >= prefix.length && whole.subarray(0, prefix.length).equals(prefix);
}
