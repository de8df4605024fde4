import { quotedPath } from "../../util/format.js";
import type { Command } from "commander";
import type { TurnRecord } from "../../types.js";
import { globalsOf, open, openToCapture, withGlobals } from "../context.js";
import {
  age,
  color,
  counted,
  fewPaths,
  formatCount,
  humanPath,
  humanText,
  nFiles,
  shortId,
} from "../output.js";
import { refuseNotUtf8 } from "../raw-args.js";
import type { Action } from "../runner.js";
import * as rewind from "./rewind.js";
import {
  resolveSession,
  resolveSessionWithTurns,
  sessionsBelow,
  sessionsElsewhere,
} from "../../integrations/session-lookup.js";

/** Session commands: turn, touch, sessions, log, rewind, redo. */
export function register(program: Command, run: Action): void {
  const turn = program
    .command("turn")
    .description("mark the start or end of an agent turn (snapshots before and after)");
  withGlobals(turn.command("begin"))
    .description("snapshot before a turn")
    .requiredOption("--session <id>", "the session (agent conversation)")
    .requiredOption("--turn <id>", "the turn")
    .option("--prompt <text>", "the user's prompt (a preview is kept)")
    .action(
      run(async (command) => {
        const options = command.opts() as { session: string; turn: string; prompt?: string };
        const ws = await openToCapture(globalsOf(command));
        const begun = await ws.session(options.session).beginTurn(options.turn, { prompt: options.prompt });
        return {
          json: begun,
          human: () => `turn ${color.bold(humanText(begun.turn))} began · before ${shortId(begun.before)}`,
        };
      }),
    );
  withGlobals(turn.command("end"))
    .description("snapshot after a turn and record the paths it changed")
    .option("--session <id>", "the session (default: the most recently active)")
    .option("--turn <id>", "the turn (default: the open one)")
    .action(
      run(async (command) => {
        const options = command.opts() as { session?: string; turn?: string };
        const ws = await openToCapture(globalsOf(command));
        const session = await resolveSession(ws, options.session);
        const ended = await session.endTurn(options.turn as string);
        return {
          json: ended,
          human: () =>
            [
              `turn ${color.bold(humanText(ended.turn))} ended · after ${shortId(ended.after)} · ${nFiles(ended.changed.length)} changed`,
              ...listPaths(ended.changed),
            ].join("\n"),
        };
      }),
    );
  for (const sub of turn.commands) sub.exitOverride().configureOutput({ outputError: () => {} });

  withGlobals(program.command("touch"))
    .description("mark paths as touched by the agent: captured even if ignored, attributed to the open turn")
    .option("--session <id>", "the session (default: the most recently active)")
    .argument("<paths...>", "files or directories")
    .action(
      run(async (command) => {
        const options = command.opts() as { session?: string };
        refuseNotUtf8(command.args, "touch its directory instead: that covers every file below it");
        const ws = await openToCapture(globalsOf(command));
        const session = await resolveSession(ws, options.session);
        const result = await session.touched(command.args);
        const leftOut = result.leftOut ?? [];
        const human = () =>
          [
            `touched ${counted(result.touched.length, "path")}`,
            ...(leftOut.length > 0
              ? [`not captured, in a nested repository or submodule: ${leftOut.map(quotedPath).join(", ")}`]
              : []),
            ...(result.ghostignored
              ? [
                  `not captured, a .ghostignore names them (its rules win over a touch): ${result.ghostignored.map(quotedPath).join(", ")}; no snapshot holds them, so no rewind changes them`,
                ]
              : []),
            ...(result.outsideTurn
              ? [
                  `no turn of session ${humanText(session.id)} is open: they are captured from now on, but no rewind undoes edits made to them before the next turn begins`,
                ]
              : []),
          ].join("\n");
        return { json: result, human };
      }),
    );

  withGlobals(program.command("sessions"))
    .description("list this workspace's sessions, most recently active first")
    .action(
      run(async (command) => {
        const ws = await open(globalsOf(command));
        const list = await ws.sessions();
        // Sessions of agents started in subdirectories are theirs, but named here too.
        const elsewhere = list.length === 0 ? await sessionsElsewhere(ws) : await sessionsBelow(ws);
        return {
          json: list,
          human: () =>
            list.length === 0
              ? `no sessions of ${ws.root} yet${elsewhere || " (start one with `ghostcommit turn begin --session S --turn T`)"}`
              : list
                  .map(
                    (s) =>
                      `${color.bold(humanText(s.session))}  ${counted(s.turns, "turn")}  ${age(s.updatedAt)}${s.origin ? color.dim(`  fetched from ${humanText(s.origin.host)} via ${humanText(s.origin.remote)}`) : ""}`,
                  )
                  .join("\n") +
                (elsewhere ? `\n${color.dim(humanText(elsewhere.trim().replace(/^\((.*)\)$/, "$1")))}` : ""),
        };
      }),
    );

  withGlobals(program.command("log"))
    .description("a session's turns with prompt preview and changed paths")
    .option("--session <id>", "the session (default: the most recently active)")
    .option("--agent <name>", "the session is this agent's: act in the workspace its hooks keep it in")
    .action(
      run(async (command) => {
        const options = command.opts() as { session?: string; agent?: string };
        const ws = await open(globalsOf(command));
        const marked = { gone: true }; // turns whose snapshots are gone say so
        const { session, turns } = await resolveSessionWithTurns(
          ws,
          options.session,
          options.agent,
          undefined,
          marked,
        );
        return { json: turns, human: () => describeLog(session.id, turns) };
      }),
    );

  rewind.register(program, run);
}

const STATE_COLOR = {
  open: color.cyan,
  ended: color.yellow,
  done: color.green,
  rewound: color.dim,
  gone: color.yellow,
};

/** The state `log` shows: a turn whose snapshots are gone, or whose conversation ended with it open, looks like no other. */
function shownStateOf(t: TurnRecord): keyof typeof STATE_COLOR {
  if (t.gone) return "gone";
  return t.abandonedAt !== undefined ? "ended" : t.state;
}

/** An open turn's changes are known when it ends: no count until then (0 would say it changed nothing). */
const filesOf = (t: TurnRecord) => (t.state === "open" ? "…" : nFiles(t.changed.length));

function describeLog(session: string, turns: TurnRecord[]): string {
  if (turns.length === 0) return `session ${humanText(session)} has no turns yet`;
  const lines = [`session ${color.bold(humanText(session))}`];
  // Columns as wide as their widest cell: turn ids and file counts vary in length.
  const turnWidth = Math.max(...turns.map((t) => humanText(t.turn).length));
  const filesWidth = Math.max(...turns.map((t) => filesOf(t).length));
  for (const t of turns) {
    if (t.unbegunBefore) {
      const n = t.unbegunBefore;
      lines.push(
        color.yellow(
          `  (${n === 1 ? "a prompt" : `${n} prompts`} here had no undo: the snapshot before ${n === 1 ? "it" : "each"} never finished)`,
        ),
      );
    }
    const shownState = shownStateOf(t);
    const state = STATE_COLOR[shownState](shownState.padEnd(7));
    const files = filesOf(t).padEnd(filesWidth);
    const shown = humanText(t.turn);
    const turn = color.bold(shown) + " ".repeat(turnWidth - shown.length);
    lines.push(`  ${turn}  ${state} ${files} ${age(t.startedAt).padEnd(11)} ${humanText(t.prompt)}`);
    if (t.changed.length > 0) lines.push(color.dim(`        ${fewPaths(t.changed)}`));
    if (t.uncertain && t.uncertain.length > 0)
      lines.push(color.yellow(`        maybe not the agent's: ${fewPaths(t.uncertain)}`));
    if (t.rewoundPaths) {
      lines.push(color.dim(`        rewound only: ${fewPaths(t.rewoundPaths)}`));
    }
    if (t.rewindUnfinished)
      lines.push(
        color.yellow(
          "        its rewind did not finish: some files are back, others not; `ghostcommit doctor` says how to finish or undo it",
        ),
      );
  }
  if (turns.some((t) => shownStateOf(t) === "open"))
    lines.push(color.dim("…: an open turn's changed paths are known when it ends"));
  if (turns.some((t) => shownStateOf(t) === "ended"))
    lines.push(
      color.dim(
        "ended: its agent moved on with the turn open (interrupted, then the conversation ended or a new prompt came); it runs no more, and rewinding it needs no --force",
      ),
    );
  if (turns.some((t) => t.uncertain && t.uncertain.length > 0))
    lines.push(
      color.dim(
        "maybe not the agent's: no tool call of the turn can account for the change (made before the agent edited the file or after its last call that could have, while the turn was interrupted, or while another session's ran); rewinding the turn refuses them without --force",
      ),
    );
  if (turns.some((t) => t.gone))
    lines.push(color.dim("gone: the turn's snapshots expired or were dropped; it can no longer be rewound"));
  return lines.join("\n");
}

function listPaths(paths: string[], limit = 20): string[] {
  const lines = paths.slice(0, limit).map((p) => `  ${humanPath(p)}`);
  if (paths.length > limit) lines.push(`  … and ${formatCount(paths.length - limit)} more (see --json)`);
  return lines;
}
