import { promises as fs } from "node:fs";
import type { StoreContext } from "../store/context.js";
import { runGit } from "../git/exec.js";
import { isoFromMicros, nowMicros } from "../store/metadata.js";
import { writeFileAtomic } from "../store/layout.js";
import { fetchRefs, remoteNamespace, resolveRemote } from "../store/remote.js";
import type { FetchOptions, FetchReport, SessionOrigin } from "../types.js";
import { Journal } from "./journal.js";
import { foldJournal, parseJournal } from "./model.js";
import { fetchedLinksPrefix, removeFetchedLinks } from "../store/fetched-links.js";
import { deadPackTemps, removePackTemps } from "../store/pack-temps.js";
import { linkBorrowed } from "../store/snapshots.js";
import {
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
      try {
        report.bytes = await fetchRefs(engine.refs.refsGitDir, remote, [
          `${ns}snapshots/*:${engine.refs.refPrefix}*`,
          `+${ns}sessions/*:${trackingPrefix(engine, remote)}*`,
          `+${ns}links/*:${links}*`,
        ]);
      } finally {
        // Never in place of the fetch's own error; any left are removed by the next fetch.
        await removeFetchedLinks(engine).catch(() => {});
      }
      report.snapshots = (await engine.refs.refIds()).filter((id) => !before.has(id));
      // Fetched snapshots may need objects only the repository has: protect them from its gc.
      await linkBorrowed(engine);
      const origins: Record<string, SessionOrigin> = {};
      // Only this remote's: the sessions fetched before from others are not in its report.
      for (const commit of await trackedSessionCommits(engine, trackingPrefix(engine, remote))) {
        const theirs = await readSessionCommit(engine, commit);
        const { records } = parseJournal(theirs.journal.toString("utf8"));
        const header = records.find((r) => r.e === "session");
        if (header?.e !== "session") continue; // not a journal: nothing to bring in
        const session = header.session;
        const journal = new Journal(engine.paths.sessionsDir, session);
        const outcome = await journal.locked(async () => {
          const ours = await fs.readFile(journal.file).catch(() => null);
          if (ours !== null && extendsJournal(ours, theirs.journal)) return "unchanged";
          if (ours !== null && !extendsJournal(theirs.journal, ours)) return "conflict";
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
          origins[session] = { remote: remote.url, host: theirs.host, fetchedAt: isoFromMicros(nowMicros()) };
        }
      }
      await recordOrigins(engine, origins);
      // A session kept as it is here brings none of its snapshots either: listed under its id,
      // the other machine's turns would read as this one's.
      const refused = new Set(report.conflicts.map((c) => c.session));
      if (refused.size > 0) {
        const fetched = new Set(report.snapshots);
        const theirs = (await engine.refs.list())
          .filter((s) => fetched.has(s.id) && s.meta.session !== undefined && refused.has(s.meta.session))
          .map((s) => s.id);
        await engine.refs.remove(theirs);
        const dropped = new Set(theirs);
        report.snapshots = report.snapshots.filter((id) => !dropped.has(id));
      }
      return report;
    }),
  );
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
