import type { Command } from "commander";
import { GhostcommitError } from "../../errors.js";
import type { RedoReport, RewindReport } from "../../types.js";
import {
  checkNamedPaths,
  commandHint,
  type GlobalOptions,
  globalsOf,
  open,
  withGlobals,
} from "../context.js";
import { color, humanPath, humanText, progress, shortId, skipStatus, turnList } from "../output.js";
import type { Action } from "../runner.js";
import { ioSkips } from "../../restore/outcome.js";
import { describeRestore } from "./restore.js";
import { resolveSessionWithTurns } from "../../integrations/session-lookup.js";
import { shellWord } from "../../util/shell.js";

export function register(program: Command, run: Action): void {
  withGlobals(program.command("rewind"))
    .description("put back the files a session's turns changed, as they were before a turn")
    .option("--session <id>", "the session (default: the most recently active)")
    .option("--to <turn>", "rewind this turn and every later one (default: pick on a terminal)")
    .option("--agent <name>", "the session is this agent's: act in the workspace its hooks keep it in")
    .argument("[paths...]", "only these paths (a directory names everything below it)")
    .option("--dry-run", "print the plan and change nothing")
    .option("--force", "rewind even over later edits or an open turn")
    .option(
      "--keep-open-turn",
      "for an agent undoing from inside its own open turn: rewind the turns before it, leave it open",
    )
    .action(
      run(async (command) => {
        const options = command.opts() as {
          session?: string;
          to?: string;
          dryRun?: boolean;
          force?: boolean;
          keepOpenTurn?: boolean;
          agent?: string;
        };
        const globals = globalsOf(command);
        if (options.to === undefined && (globals.json || !process.stdin.isTTY || !process.stdout.isTTY)) {
          throw new GhostcommitError(
            "usage",
            "rewind needs --to TURN when it cannot ask (not a terminal, or --json)",
          );
        }
        // Paths are taken from the session's workspace, which --agent or --session may find above
        // this directory: checked against it once it is known (else before anything is opened).
        const moves = options.agent !== undefined || options.session !== undefined;
        let paths = moves ? undefined : checkNamedPaths(globals, command.args);
        const here = await open(globals);
        const { session, ws } = await resolveSessionWithTurns(here, options.session, options.agent);
        if (moves) paths = checkNamedPaths({ ...globals, C: ws.root }, command.args);
        // The hints printed run where this command ran: they name the workspace --agent moved to.
        const hints = ws.root === here.root ? globals : { ...globals, C: ws.root };
        if (options.to === undefined) {
          // Loaded on demand: the picker's terminal UI costs start-up time every other command would pay.
          const { pickAndRewind } = await import("./picker.js");
          return pickAndRewind(session, { force: options.force, dryRun: options.dryRun, paths }, hints);
        }
        const done = progress("rewinding");
        const to = options.to;
        const report = await session
          .rewind({
            to,
            dryRun: options.dryRun,
            force: options.force,
            paths,
            keepOpenTurn: options.keepOpenTurn,
          })
          .catch((error: unknown) => {
            // Besides --force, the way the picker offers: the other paths alone, these left as they are.
            if (GhostcommitError.is(error, "conflict"))
              error.message += `; \`${commandHint(hints, `rewind --session ${shellWord(session.id)} --to ${shellWord(to)}${options.keepOpenTurn ? " --keep-open-turn" : ""} -- PATH…`)}\` rewinds only the paths it names`;
            throw error;
          })
          .finally(done);
        return {
          json: report,
          human: () => describeRewind(report, hints),
          ...skipStatus(report),
        };
      }),
    );

  withGlobals(program.command("redo"))
    .description("undo a session's last rewind")
    .option("--session <id>", "the session (default: the most recently active)")
    .option("--dry-run", "print the plan and change nothing")
    .option("--force", "redo even over edits made since the rewind")
    .option(
      "--keep-open-turn",
      "for an agent redoing from inside its own open turn: one that has changed nothing keeps the redo",
    )
    .option("--agent <name>", "the session is this agent's: act in the workspace its hooks keep it in")
    .action(
      run(async (command) => {
        const options = command.opts() as {
          session?: string;
          dryRun?: boolean;
          force?: boolean;
          keepOpenTurn?: boolean;
          agent?: string;
        };
        const globals = globalsOf(command);
        const here = await open(globals);
        const { session, ws } = await resolveSessionWithTurns(here, options.session, options.agent);
        const hints = ws.root === here.root ? globals : { ...globals, C: ws.root };
        const done = progress("redoing");
        const report = await session
          .redo({ dryRun: options.dryRun, force: options.force, keepOpenTurn: options.keepOpenTurn })
          .finally(done);
        return {
          json: report,
          human: () => describeRedo(report, hints),
          ...skipStatus(report),
        };
      }),
    );
}

export function describeRewind(report: RewindReport, globals: GlobalOptions = {}): string {
  const turns = turnList(report.rewoundTurns);
  const verb = report.resumed ? "finish rewinding" : "rewind";
  // Files it still could not write: not finished, as the line below says, whether resumed or not.
  const unfinished = !report.dryRun && ioSkips(report);
  const done = report.resumed ? (unfinished ? "went on rewinding" : "finished rewinding") : "rewound";
  const head = report.dryRun
    ? `would ${verb} ${turns} of session ${humanText(report.session)}`
    : `${done} ${color.bold(turns)} of session ${humanText(report.session)} (files as before turn ${humanText(report.to)})`;
  const lines = [head];
  if (report.paths) lines.push(`only: ${report.paths.map(humanPath).join(", ")}`);
  if (report.overridden) lines.push(overwroteLine(report.overridden, report.dryRun));
  lines.push(describeRestore({ ...report, safety: null }));
  if (report.written.length + report.deleted.length + report.skipped.length === 0)
    lines.push(color.dim(`the files were already as before turn ${humanText(report.to)}: nothing to change`));
  const session = shellWord(report.session);
  if (unfinished)
    lines.push(
      `not finished: \`${commandHint(globals, `rewind --session ${session} --to ${shellWord(report.to)}`)}\` finishes it once those files can be written`,
    );
  if (!report.dryRun) lines.push(...permissionHints(report, globals));
  if (!report.dryRun)
    lines.push(color.dim(`undo with: ${commandHint(globals, `redo --session ${session}`)}`));
  return lines.join("\n");
}

/**
 * Files the rewind left for their permissions: the turn now counts as rewound, so running it again
 * does nothing; once the permission is fixed, restoring them from the snapshot it wanted does.
 */
function permissionHints(report: RewindReport, globals: GlobalOptions): string[] {
  const bySnapshot = new Map<string, string[]>();
  for (const skip of report.skipped) {
    if (skip.reason !== "permission" || !skip.from) continue;
    bySnapshot.set(skip.from, [...(bySnapshot.get(skip.from) ?? []), skip.path]);
  }
  return [...bySnapshot].map(
    ([id, paths]) =>
      `not rewound: once you can write ${paths.length === 1 ? "it" : "them"}, \`${commandHint(globals, `restore ${shortId(id)} -- ${paths.map(shellWord).join(" ")}`)}\` finishes the rewind for ${paths.length === 1 ? "it" : "them"} (writes or deletes what it meant to)`,
  );
}

export function describeRedo(report: RedoReport, globals: GlobalOptions = {}): string {
  const turns = turnList(report.restoredTurns);
  const head = report.dryRun
    ? `would restore ${turns} of session ${humanText(report.session)}`
    : `restored ${color.bold(turns)} of session ${humanText(report.session)}`;
  const lines = [head];
  if (report.overridden) lines.push(overwroteLine(report.overridden, report.dryRun));
  lines.push(describeRestore({ ...report, safety: null }));
  if (!report.dryRun && ioSkips(report))
    lines.push(
      `not finished: \`${commandHint(globals, `redo --session ${shellWord(report.session)}`)}\` finishes it once those files can be written`,
    );
  // What it overwrote is only in its safety snapshot, which holds the files as before the redo.
  if (!report.dryRun && report.overridden && report.safety)
    lines.push(color.dim(`undo with: ${commandHint(globals, `restore ${shortId(report.safety)}`)}`));
  return lines.join("\n");
}

/** A forced rewind's or redo's overrides, said so that none is silent. */
function overwroteLine(overridden: string[], dryRun: boolean | undefined): string {
  const count = overridden.length === 1 ? "1 conflict" : `${overridden.length} conflicts`;
  return `${dryRun ? "would overwrite" : "overwrote"} (--force) ${count}: ${overridden.map(humanPath).join(", ")}`;
}
