import { humanText } from "../util/format.js";
import { existsSync, promises as fs } from "node:fs";
import type { StoreContext } from "../store/context.js";
import { GhostcommitError } from "../errors.js";
import {
  bytesToSend,
  deleteRemoteRefs,
  listRemoteRefs,
  presentObjects,
  pushRefs,
  type ResolvedRemote,
  resolveRemote,
} from "../store/remote.js";
import { updateRefsQuietly } from "../store/ref-updates.js";
import type { PushOptions, PushReport } from "../types.js";
import { Journal } from "./journal.js";
import { refuseIgnoredContent } from "./push-secrets.js";
import { foldJournal } from "./model.js";
import { parseJournal } from "./journal.js";
import {
  completeRecords,
  extendsJournal,
  fetchSessionCommits,
  journalName,
  readSessionCommit,
  remoteSessionRef,
  remoteSnapshotRef,
  sessionSnapshotIds,
  trackingPrefix,
  withSyncLock,
  writeSessionCommit,
} from "./remote-sessions.js";
import { readAllJournals } from "./journal.js";
import { carrierRefs, writePushCarrier, writeSnapshotLinks } from "./push-edges.js";

interface SessionUpdate {
  session: string;
  name: string;
  turns: number;
  commit: string;
  status: "created" | "updated";
}

/**
 * Sends sessions (journal and snapshots) and, on request, plain snapshots to a remote, in one
 * atomic push. Nothing already on the remote is sent again. Refused, with nothing sent, when a
 * snapshot holds files the repository ignores (unless allowed) or when the remote has another
 * machine's history under one of the session ids.
 */
export async function pushWorkspace(
  engine: StoreContext,
  cwd: string,
  options: PushOptions = {},
  /**
   * `leaveConflicting`: send the other sessions and list those in conflict under `leftOut`, as the
   * push after a turn does: one old session pushed elsewhere under the same id must not keep every
   * later session from leaving a machine that may soon be gone.
   */
  { leaveConflicting = false }: { leaveConflicting?: boolean } = {},
): Promise<PushReport> {
  const remote = await resolveRemote(engine.location, options.remote, "push", cwd, {
    configuredOnly: options.configuredRemoteOnly,
  });
  const report: PushReport = {
    remote: remote.name,
    url: remote.url,
    sessions: [],
    unchanged: [],
    behind: [],
    snapshots: [],
    refs: 0,
    bytes: 0,
  };
  if (!existsSync(engine.paths.gitDir)) return report; // nothing was ever recorded here
  // Under the store's write lock: gc must not prune the session commits before they are sent.
  return engine.writing(() =>
    withSyncLock(engine, async function attempt(again = false): Promise<PushReport> {
      Object.assign(report, { sessions: [], unchanged: [], behind: [], snapshots: [], refs: 0, bytes: 0 });
      delete report.leftOut;
      delete report.refsLeft;
      const gitDir = engine.paths.gitDir;
      const remoteRefs = await listRemoteRefs(gitDir, remote);
      const snapshots = await engine.refs.list();
      const sessionIds =
        options.sessions ?? (await readAllJournals(engine.paths.sessionsDir)).map((s) => s.session);

      const present = await presentObjects(engine.paths.dir, engine.readEnv, [
        ...new Set(remoteRefs.values()),
      ]);
      const missingSessionCommit = sessionIds.some((session) => {
        const oid = remoteRefs.get(remoteSessionRef(engine, journalName(engine, session)));
        return oid !== undefined && !present.has(oid);
      });
      if (missingSessionCommit) await fetchSessionCommits(engine, remote);

      const updates: SessionUpdate[] = [];
      const conflicts: { session: string; host: string }[] = [];
      const wanted = new Set<string>();
      for (const session of sessionIds) {
        const journal = await completeJournal(new Journal(engine.paths.sessionsDir, session).file, session);
        const { records } = parseJournal(journal.toString("utf8"));
        const state = foldJournal(session, records);
        const ids = sessionSnapshotIds(state, records, snapshots);
        const name = journalName(engine, session);
        const remoteCommit = remoteRefs.get(remoteSessionRef(engine, name)) ?? null;
        const theirs = remoteCommit === null ? null : await readSessionCommit(engine, remoteCommit);
        const same = theirs?.journal.equals(journal) === true;
        // Another machine continued it: this one has nothing the remote lacks.
        const behind = theirs !== null && !same && extendsJournal(theirs.journal, journal);
        if (theirs !== null && !same && !behind && !extendsJournal(journal, theirs.journal)) {
          conflicts.push({ session, host: theirs.host }); // its snapshots are not sent either
          continue;
        }
        for (const id of ids) wanted.add(id);
        if (same || behind) {
          (same ? report.unchanged : report.behind).push(session);
          continue;
        }
        const commit = await writeSessionCommit(engine, journal, remoteCommit);
        const status = remoteCommit === null ? "created" : "updated";
        updates.push({ session, name, turns: state.turns.length, commit, status });
      }
      if (conflicts.length > 0 && !leaveConflicting)
        throw sessionConflict(conflicts, remote.url, engine.optionNames.sessions);
      if (conflicts.length > 0) report.leftOut = conflicts;

      if (options.snapshots) for (const s of snapshots) if (s.meta.session === undefined) wanted.add(s.id);
      const toSend = snapshots.filter(
        (s) => wanted.has(s.id) && !remoteRefs.has(remoteSnapshotRef(engine, s.id)),
      );
      if (!options.includeIgnored) await refuseIgnoredContent(engine, toSend);

      const refUpdates: [string, string][] = [
        ...updates.map((u): [string, string] => [u.commit, remoteSessionRef(engine, u.name)]),
        ...toSend.map((s): [string, string] => [s.id, remoteSnapshotRef(engine, s.id)]),
      ];
      refUpdates.push(...(await writeSnapshotLinks(engine, toSend, remoteRefs, present, snapshots)));
      const tips = refUpdates.map(([oid]) => oid);
      // A carrier left by an earlier push (cut off, or the remote refused its deletion): no new
      // one while it stays, or a remote that refuses deletions would keep one per push.
      const leftOver = carrierRefs(engine, remoteRefs);
      const carrier =
        toSend.length > 0 && leftOver.length === 0
          ? await writePushCarrier(engine, tips, remoteRefs, present, snapshots)
          : null;
      const sent = carrier ? [carrier.oid] : tips;
      report.bytes = await bytesToSend(engine.paths.dir, engine.readEnv, sent, [...present]);
      try {
        await pushRefs(gitDir, remote, carrier ? [...refUpdates, [carrier.oid, carrier.ref]] : refUpdates);
      } catch (error) {
        // Another machine pushed one of these refs meanwhile (the same new session id): judged
        // afresh, that is the usual conflict (or nothing to do), not git's "atomic push failed".
        if (again || !(await remoteMoved(gitDir, remote, remoteRefs, refUpdates))) throw error;
        return attempt(true);
      }
      await trackPushed(engine, remote, updates);
      const temporary = carrier ? [carrier.ref, ...leftOver] : leftOver;
      const kept = await deleteRemoteRefs(gitDir, remote, temporary);
      if (kept !== null) report.refsLeft = { refs: temporary, reason: kept };
      report.sessions = updates.map(({ session, turns, status }) => ({ session, turns, status }));
      report.snapshots = toSend.map((s) => s.id);
      report.refs = refUpdates.length;
      return report;
    }),
  );
}

/** Whether a ref this push meant to write changed on the remote since it was listed. */
async function remoteMoved(
  gitDir: string,
  remote: ResolvedRemote,
  listed: Map<string, string>,
  updates: [string, string][],
): Promise<boolean> {
  const now = await listRemoteRefs(gitDir, remote).catch(() => null);
  return now !== null && updates.some(([, ref]) => now.get(ref) !== listed.get(ref));
}

/** The journal up to its last whole record: a line being appended right now is left for next time. */
async function completeJournal(file: string, session: string): Promise<Buffer> {
  const text = await fs.readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") {
      throw new GhostcommitError("not-found", `no session ${humanText(session)} in this workspace`, {
        session,
      });
    }
    throw new GhostcommitError("io", `cannot read session journal ${file}: ${error.message}`);
  });
  return completeRecords(text);
}

function sessionConflict(
  conflicts: { session: string; host: string }[],
  url: string,
  sessionsOption: string,
): GhostcommitError {
  const shown = conflicts.map((c) => `${c.session} (pushed from ${c.host})`).join(", ");
  return new GhostcommitError(
    "conflict",
    `push refused: ${url} holds a different history under the same session id: ${shown}; nothing was sent. Push the other sessions with ${sessionsOption}, or continue under a new session id`,
    { conflicts: conflicts.map((c) => c.session), pushedFrom: conflicts.map((c) => c.host) },
  );
}

/** Remembers the commits just pushed, so the next push builds on them without a fetch. */
async function trackPushed(
  engine: StoreContext,
  remote: ResolvedRemote,
  updates: SessionUpdate[],
): Promise<void> {
  if (updates.length === 0) return;
  const prefix = trackingPrefix(engine, remote);
  const input = updates.map((u) => `update ${prefix}${u.name}\0${u.commit}\0\0`).join("");
  await updateRefsQuietly(engine.paths.dir, engine.refs.refsGitDir, input);
}
