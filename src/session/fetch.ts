import { promises as fs } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { runGit } from "../git/exec.js";
import { isoFromMicros, nowMicros } from "../store/metadata.js";
import { writeFileAtomic } from "../store/layout.js";
import { fetchRefs, type ResolvedRemote, remoteNamespace, resolveRemote } from "../store/remote.js";
import { updateRefsQuietly } from "../store/ref-updates.js";
import type { StoredSnapshot } from "../store/store.js";
import type { FetchOptions, FetchReport, SessionOrigin } from "../types.js";
import { Journal } from "./journal.js";
import { foldJournal } from "./model.js";
import { parseJournal } from "./journal.js";
import { fetchedLinksPrefix, fetchingSnapshotsPrefix, removeFetchedLinks } from "../store/fetched-links.js";
import { deadPackTemps, removePackTemps, removingTempPackOnFailure } from "../store/pack-temps.js";
import { linkBorrowed } from "../store/snapshots.js";
import { packsIn, refuseUnsafeTrees } from "../store/received-trees.js";
import { sessionsElsewhere } from "./fetch-elsewhere.js";
import {
  completeRecords,
  extendsJournal,
  readSessionCommit,
  recordOrigins,
  trackingPrefix,
  withSyncLock,
} from "./remote-sessions.js";

/**
 * Brings a remote's sessions and snapshots into this store: snapshots become ordinary snapshot
 * refs (their ids are content hashes, the same on every machine), journals are written to the
 * sessions directory. A local journal is only ever replaced by one that extends it; a different
 * history under the same session id is kept as it is here and reported.
 */
export async function fetchWorkspace(
  engine: StoreContext,
  cwd: string,
  options: FetchOptions = {},
): Promise<FetchReport> {
  engine.assertEnabled();
  const remote = await resolveRemote(engine.location, options.remote, "fetch", cwd, {
    configuredOnly: options.configuredRemoteOnly,
  });
  const report: FetchReport = {
    remote: remote.name,
    url: remote.url,
    sessions: [],
    unchanged: [],
    conflicts: [],
    snapshots: [],
    bytes: 0,
    elsewhere: [],
  };
  // Under the store's write lock: gc must not prune fetched objects before their refs exist.
  return engine.writing(() =>
    withSyncLock(engine, async () => {
      const ns = remoteNamespace(engine.location);
      const before = new Set(await engine.refs.refIds());
      const links = fetchedLinksPrefix(engine);
      // A fetch killed mid-transfer left git's temp pack, as large as what it had received: no
      // other fetch runs now, so it goes once nothing else can be writing it.
      await removePackTemps(await deadPackTemps(engine, { sync: true })).catch(() => []);
      const staging = fetchingSnapshotsPrefix(engine);
      const tracking = trackingPrefix(engine, remote);
      // Only a fetch or a push (under the sync lock, held now) writes these refs: a lock file there
      // is a cut-off git's, which would fail every later fetch ("cannot lock ref").
      await removeRefLocks(engine.refs.refsGitDir, [staging, links, tracking]);
      try {
        const refspecs = [
          `+${ns}snapshots/*:${staging}*`,
          `+${ns}sessions/*:${tracking}*`,
          `+${ns}links/*:${links}*`,
        ];
        const packsBefore = await packsIn(engine.refs.refsGitDir);
        report.bytes = await removingTempPackOnFailure(
          engine,
          { sync: true },
          fetchRefs(engine.refs.refsGitDir, remote, refspecs),
        );
        // A tree naming `..` would have a restore write beside the workspace: nothing is taken.
        await refuseUnsafeTrees(engine.refs.refsGitDir, packsBefore, remote.url);
        const fetched = (await engine.refs.list(staging)).filter((s) => !before.has(s.id));
        const refused = await takeSessions(engine, remote, report);
        report.snapshots = await listAccepted(engine, fetched, refused);
        report.elsewhere = await sessionsElsewhere(engine, remote).catch(() => []);
      } finally {
        // Never in place of the fetch's own error; any left are removed by the next fetch.
        await removeFetchedLinks(engine).catch(() => {});
      }
      // Fetched snapshots may need objects only the repository has: protect them from its gc.
      await linkBorrowed(engine);
      return report;
    }),
  );
}

/** Removes the `.lock` files below the ref directories of `prefixes` (`refs/…/`). */
async function removeRefLocks(refsGitDir: string, prefixes: string[]): Promise<void> {
  for (const prefix of prefixes) {
    const dir = path.join(refsGitDir, ...prefix.split("/").filter(Boolean));
    const names = await fs.readdir(dir, { recursive: true }).catch(() => [] as string[]);
    for (const name of names) {
      if (name.endsWith(".lock")) await fs.rm(path.join(dir, name), { force: true }).catch(() => {});
    }
  }
}

/**
 * Lists the `fetched` snapshots as this store's, but those of the `refused` sessions (kept as they
 * are here: the other machine's turns would read as this one's under the same id). A commit that
 * is no snapshot (only a damaged or forged remote holds one) was never among them.
 */
async function listAccepted(
  engine: StoreContext,
  fetched: StoredSnapshot[],
  refused: Set<string>,
): Promise<string[]> {
  const listed = fetched
    .filter((s) => s.meta.session === undefined || !refused.has(s.meta.session))
    .map((s) => s.id);
  const prefix = engine.refs.refPrefix;
  if (listed.length > 0) {
    const input = listed.map((id) => `update ${prefix}${id}\0${id}\0\0`).join("");
    await updateRefsQuietly(engine.paths.dir, engine.refs.refsGitDir, input);
  }
  return listed;
}

/** Brings in the fetched journals that extend this workspace's (or are new); returns the sessions refused. */
async function takeSessions(
  engine: StoreContext,
  remote: ResolvedRemote,
  report: FetchReport,
): Promise<Set<string>> {
  // Only this remote's: the sessions fetched before from others are not in its report.
  for (const commit of await trackedSessionCommits(engine, trackingPrefix(engine, remote))) {
    const theirs = await readSessionCommit(engine, commit);
    const { records, untrusted } = parseJournal(theirs.journal.toString("utf8"));
    const header = records.find((r) => r.e === "session");
    if (header?.e !== "session") continue; // not a journal: nothing to bring in
    const session = header.session;
    const journal = new Journal(engine.paths.sessionsDir, session);
    if (untrusted > 0) {
      report.conflicts.push({
        session,
        reason: `its journal on ${remote.url} (pushed from ${theirs.host}) names paths outside the workspace, forged or damaged: it was not fetched, nor its snapshots`,
      });
      continue;
    }
    const outcome = await journal.locked(async () => {
      const read = await fs.readFile(journal.file).catch(() => null);
      const ours = read && completeRecords(read);
      if (ours !== null && extendsJournal(ours, theirs.journal)) return "unchanged";
      if (ours !== null && !extendsJournal(theirs.journal, ours)) return "conflict";
      // Its origin first: a fetch killed between the two left a journal the next fetch finds
      // unchanged, listed as this machine's for good; an origin without its journal lists nothing.
      const origin: SessionOrigin = {
        remote: remote.url,
        host: theirs.host,
        fetchedAt: isoFromMicros(nowMicros()),
      };
      // The records past ours are the other machine's doing: its rewinds went back there, not here.
      const from = ours === null ? 0 : parseJournal(ours.toString("utf8")).records.length;
      await recordOrigins(engine, { [session]: { ...origin, received: [from, records.length] } });
      await writeFileAtomic(journal.file, theirs.journal);
      return ours === null ? "created" : "updated";
    });
    if (outcome === "unchanged") report.unchanged.push(session);
    else if (outcome === "conflict") {
      report.conflicts.push({
        session,
        reason: `this workspace has a different history under session id ${session}; the one on ${remote.url} (pushed from ${theirs.host}) was not fetched, nor its snapshots`,
      });
    } else {
      report.sessions.push({
        session,
        turns: foldJournal(session, records).turns.length,
        status: outcome,
      });
    }
  }
  return new Set(report.conflicts.map((c) => c.session));
}

async function trackedSessionCommits(engine: StoreContext, prefix: string): Promise<string[]> {
  const result = await runGit(["for-each-ref", "--format=%(objectname)", prefix], {
    cwd: engine.paths.dir,
    env: { GIT_DIR: engine.refs.refsGitDir },
  });
  return result.stdout
    .toString("latin1")
    .split("\n")
    .filter((line) => /^[0-9a-f]{40}$/.test(line));
}
