import type { Command } from "commander";
import type { FetchReport, PushReport } from "../../types.js";
import { globalsOf, open, withGlobals } from "../context.js";
import { color, counted, formatBytes, humanText, progress } from "../output.js";
import type { Action } from "../runner.js";

/** push and fetch: snapshot history through git remotes. */
export function register(program: Command, run: Action): void {
  withGlobals(program.command("push"))
    .description(
      "send sessions (and with --snapshots, plain snapshots) to a git remote under refs/ghostcommit/",
    )
    .argument("[remote]", "a remote name of the repository, a URL or a path", undefined)
    .option("--session <id>", "only this session (repeatable)", (value: string, previous: string[] = []) => [
      ...previous,
      value,
    ])
    .option("--snapshots", "also send snapshots that belong to no session")
    .option("--include-ignored", "send snapshots even when they hold files the repository ignores")
    .action(
      run(async (command) => {
        const options = command.opts() as {
          session?: string[];
          snapshots?: boolean;
          includeIgnored?: boolean;
        };
        const remote = command.args[0] as string | undefined;
        const ws = await open(globalsOf(command));
        const done = progress("pushing");
        const report = await ws
          .push({
            remote,
            sessions: options.session,
            snapshots: options.snapshots,
            includeIgnored: options.includeIgnored,
          })
          .finally(done);
        return { json: report, human: () => describePush(report, options.snapshots === true) };
      }),
    );

  withGlobals(program.command("fetch"))
    .description("bring a git remote's sessions and snapshots into this workspace's store")
    .argument("[remote]", "a remote name of the repository, a URL or a path", undefined)
    .action(
      run(async (command) => {
        const remote = command.args[0] as string | undefined;
        const ws = await open(globalsOf(command));
        const done = progress("fetching");
        const report = await ws.fetch({ remote }).finally(done);
        // Sessions refused for a conflict: status 3, as a refused push, though the rest came.
        const refused = report.conflicts.length;
        const problem = `${counted(refused, "session")} not fetched (listed under conflicts, each with why); the rest was fetched`;
        return {
          json: report,
          human: () => describeFetch(report, ws.kind === "plain"),
          ...(refused ? { exitCode: 3, problem } : {}),
        };
      }),
    );
}

/** `withSnapshots`: --snapshots was given, so a push that sent nothing found every snapshot there. */
function describePush(report: PushReport, withSnapshots: boolean): string {
  const lines =
    report.refs > 0
      ? [
          `pushed to ${humanText(report.url)}: ${counted(report.sessions.length, "session")}, ${counted(report.snapshots.length, "snapshot")} (${formatBytes(report.bytes)})`,
        ]
      : withSnapshots || report.unchanged.length + report.behind.length > 0
        ? [`${humanText(report.url)} is up to date`]
        : [
            "nothing to push: no session was recorded in this workspace (--snapshots sends the snapshots of none)",
          ];
  for (const s of report.sessions)
    lines.push(`  ${color.bold(humanText(s.session))}  ${s.status}, ${counted(s.turns, "turn")}`);
  for (const s of report.behind)
    lines.push(`  ${color.yellow(humanText(s))}  the remote has later turns of it: fetch brings them`);
  if (report.refsLeft) lines.push(color.yellow(refsLeftLine(report.refsLeft)));
  return lines.join("\n");
}

/** The push's temporary refs the remote kept: what stays there and why. */
function refsLeftLine({ refs, reason }: NonNullable<PushReport["refsLeft"]>): string {
  const one = refs.length === 1;
  return `${one ? "temporary ref" : "temporary refs"} left on the remote: ${refs.map(humanText).join(", ")} (not deleted: ${humanText(reason)}); no new one is made while ${one ? "it is" : "they are"} there, and a push deletes ${one ? "it" : "them"} once the remote allows`;
}

function describeFetch(report: FetchReport, plainHere: boolean): string {
  const lines = [
    `fetched from ${humanText(report.url)}: ${counted(report.sessions.length, "session")}, ${counted(report.snapshots.length, "new snapshot")} (${formatBytes(report.bytes)})`,
  ];
  for (const s of report.sessions)
    lines.push(`  ${color.bold(humanText(s.session))}  ${s.status}, ${counted(s.turns, "turn")}`);
  for (const c of report.conflicts)
    lines.push(`  ${color.yellow(humanText(c.session))}  not fetched: ${humanText(c.reason)}`);
  const named = (report.elsewhere ?? []).filter((e) => e.folder !== null);
  const unnamed = (of: "repository" | "plain") =>
    (report.elsewhere ?? []).reduce((n, e) => n + (e.folder === null && e.of === of ? e.sessions : 0), 0);
  const [inFolders, inPlain] = [unnamed("repository"), unnamed("plain")];
  if (named.length + inFolders + inPlain > 0) {
    lines.push(
      `the remote ${report.sessions.length + report.unchanged.length > 0 ? "also " : ""}holds sessions of other workspaces, which a fetch there brings:`,
    );
    for (const e of named)
      lines.push(`  ${color.bold(humanText(e.folder!))}  ${counted(e.sessions, "session")}`);
    if (inFolders > 0)
      lines.push(
        `  ${counted(inFolders, "session")} of ${plainHere ? "a repository (its root or folders: a fetch in a clone of it brings them)" : "folders this repository's HEAD does not hold"}`,
      );
    if (inPlain > 0) lines.push(`  ${counted(inPlain, "session")} of a plain directory`);
  }
  return lines.join("\n");
}
