import { commandHint, type GlobalOptions } from "../context.js";
import { shellWord } from "../../util/shell.js";
import { cancel, confirm, intro, isCancel, multiselect, note, outro, select } from "@clack/prompts";
import { GhostcommitError } from "../../errors.js";
import type { RewindReport, SessionHandle, TurnRecord } from "../../types.js";
import {
  age,
  type CommandOutput,
  color,
  counted,
  cutText,
  fewPaths,
  formatCount,
  humanLines,
  humanPath,
  humanText,
  nFiles,
  skipStatus,
  turnList,
} from "../output.js";

/** One line of the turn picker. */
export interface TurnChoice {
  value: string;
  label: string;
  hint: string;
  /** Shown, but not choosable: a snapshot the rewind needs is gone (the hint says whose). */
  disabled?: boolean;
}

/**
 * The turns a rewind can go back to (not already rewound), newest first, each with its prompt
 * preview, when it began and how many files it changed. Pure. A rewind to a turn needs the
 * snapshots of it and of every later turn: where one of them is gone (`gone`, see
 * `log({ gone: true })`), the turn is offered disabled, saying so.
 */
export function turnChoices(turns: TurnRecord[], now = Date.now()): TurnChoice[] {
  let lost: TurnRecord | undefined; // the newest turn so far (newest first) whose snapshots are gone
  return turns
    .filter((t) => t.state !== "rewound")
    .reverse()
    .map((t) => {
      if (t.gone && !lost) lost = t;
      const prompt = cutText(humanText(t.prompt), 60);
      // As `log` says it: an open turn whose conversation ended is over ("ended"), not open.
      const files = t.abandonedAt ? "ended" : t.state === "open" ? "open" : nFiles(t.changed.length);
      const label = `${humanText(t.turn)}${prompt ? ` · ${prompt}` : ""}`;
      if (!lost) return { value: t.turn, label, hint: `${age(t.startedAt, now)} · ${files}` };
      const whose = t.gone ? "its snapshots" : `the snapshots of turn ${humanText(lost.turn)}`;
      return { value: t.turn, label, hint: `gone: ${whose} expired or were dropped`, disabled: true };
    });
}

/** What a dry run says the rewind will do, for people. Pure. */
export function previewText(report: RewindReport, limit = 15): string {
  const turns = turnList(report.rewoundTurns);
  // Files chosen: the turns stay done, only those files go back (as `rewind PATH…` says it).
  const lines = [
    report.paths
      ? `${turns}: only ${fewPaths(report.paths)} ${report.paths.length === 1 ? "goes" : "go"} back`
      : `${turns} ${report.rewoundTurns.length === 1 ? "is" : "are"} undone`,
  ];
  const rows = [
    ...report.written.map((p) => `${color.green("write ")} ${humanPath(p)}`),
    ...report.deleted.map((p) => `${color.red("delete")} ${humanPath(p)}`),
    ...report.skipped.map((s) => `${color.yellow("skip  ")} ${humanPath(s.path)}`),
  ];
  lines.push(...rows.slice(0, limit));
  if (rows.length > limit) lines.push(`… and ${formatCount(rows.length - limit)} more`);
  // Forced past a refusal: the edits it writes over are said, never silent (redo brings them back).
  if (report.overridden?.length)
    lines.push(color.yellow(`overwrites edits made since: ${fewPaths(report.overridden)}`));
  if (rows.length === 0) lines.push("no file changes (the files already match)");
  return lines.join("\n");
}

/**
 * The interactive rewind: pick a turn, see what will be written and deleted, confirm. A
 * refusal (open turn, later edits) is explained and can be overridden on the spot.
 */
export async function pickAndRewind(
  session: SessionHandle,
  options: { force?: boolean; dryRun?: boolean; paths?: string[] },
  globals: GlobalOptions = {},
): Promise<CommandOutput> {
  const nothing = (): CommandOutput => ({ json: null, human: () => "" });
  // A terminal that reports no size (a container's, a serial console) gets one: the prompts wrap
  // at its width, and at 0 they put every character on a line of its own.
  const out = process.stdout;
  if (out.isTTY && !out.columns) out.columns = 80;
  if (out.isTTY && !out.rows) out.rows = 24;
  intro(`rewind session ${humanText(session.id)}`);
  const choices = turnChoices(await session.log({ gone: true }));
  if (choices.length === 0) {
    cancel("no turn to rewind");
    return nothing();
  }
  if (choices.every((c) => c.disabled)) {
    cancel("no turn to rewind: the snapshots of every turn are gone (expired or dropped)");
    return nothing();
  }
  const to = await select({
    message: "Put the files back as they were before which turn?",
    options: choices,
  });
  if (isCancel(to)) {
    cancel("nothing was changed");
    return nothing();
  }
  let force = Boolean(options.force);
  let paths = options.paths;
  /** The dry run to show; a refusal is explained and may be overridden. Null: the person declined. */
  const preview = async (): Promise<RewindReport | null> => {
    for (;;) {
      try {
        return await session.rewind({ to, dryRun: true, force, paths });
      } catch (error) {
        if (force || !(error instanceof GhostcommitError) || !refusal(error)) throw error;
        note(refusalText(error), color.yellow("refused"));
        const way = await overrideChoice(error);
        if (isCancel(way) || way === "no") return null;
        if (way === "yes") force = true;
        else paths = way;
      }
    }
  };
  /** After a refusal: no, overwrite, or (when it names files) the plan's other files only. */
  const overrideChoice = async (error: GhostcommitError) => {
    const conflicts = new Set(GhostcommitError.is(error, "conflict") ? error.data.conflicts : []);
    const others =
      conflicts.size === 0
        ? []
        : planPaths(await session.rewind({ to, dryRun: true, force: true, paths })).filter(
            (p) => !conflicts.has(p),
          );
    const options: { value: "no" | "yes" | string[]; label: string }[] = [
      { value: "no", label: "No, change nothing" },
      {
        value: "yes",
        label: GhostcommitError.is(error, "open-turn")
          ? "Yes, end that turn and rewind it too"
          : "Yes, overwrite them",
      },
    ];
    if (others.length > 0)
      options.splice(1, 0, {
        value: others,
        label: `Only the other ${nFiles(others.length)}, leaving those`,
      });
    return select({ message: "Rewind anyway?", options, initialValue: "no" as const });
  };
  let plan = await preview();
  if (plan === null) {
    cancel("nothing was changed");
    return nothing();
  }
  if (paths === undefined && planPaths(plan).length > 1) {
    const chosen = await chooseSomeFiles(plan);
    if (chosen === null) {
      cancel("nothing was changed");
      return nothing();
    }
    if (chosen !== undefined) {
      paths = chosen;
      plan = await session.rewind({ to, dryRun: true, force, paths });
    }
  }
  let report: RewindReport | undefined;
  while (!report) {
    note(previewText(plan), "preview");
    if (options.dryRun) {
      outro("dry run: nothing was changed");
      return { json: plan, human: () => "" };
    }
    const go = await confirm({
      message: `Rewind ${counted(plan.rewoundTurns.length, "turn")}?`,
      initialValue: true,
    });
    if (isCancel(go) || !go) {
      cancel("nothing was changed");
      return nothing();
    }
    try {
      // Only what was shown: a turn that ended, or a file that changed, while the person read
      // the preview makes the rewind refuse (nothing changed), and the new plan is shown instead.
      // Unforced, the library refuses an edited file (or a turn begun meanwhile) before comparing
      // plans: that refusal, too, goes back through the preview, which offers to rewind anyway.
      report = await session.rewind({ to, force, paths, expect: plan });
    } catch (error) {
      const refused = error instanceof GhostcommitError && !force && refusal(error);
      if (!GhostcommitError.is(error, "plan-changed") && !refused) throw error;
      if (!refused) note(humanLines(error.message), color.yellow("changed since the preview"));
      const again = await preview();
      if (again === null) {
        cancel("nothing was changed");
        return nothing();
      }
      plan = again;
    }
  }
  outro(
    `rewound ${turnList(report.rewoundTurns)}${report.paths ? ` (only ${fewPaths(report.paths)})` : ""}: wrote ${nFiles(report.written.length)}, deleted ${nFiles(report.deleted.length)}${report.overridden?.length ? `, overwrote ${fewPaths(report.overridden)}` : ""} · undo with: ${commandHint(globals, `redo --session ${shellWord(session.id)}`)}`,
  );
  return {
    json: report,
    human: () => "",
    ...skipStatus(report),
  };
}

function refusal(error: GhostcommitError): boolean {
  return error.code === "conflict" || error.code === "open-turn";
}

function refusalText(error: GhostcommitError): string {
  const conflicts = GhostcommitError.is(error, "conflict") ? error.data.conflicts : [];
  if (conflicts.length === 0) return humanLines(error.message);
  const uncertain = new Set(GhostcommitError.is(error, "conflict") ? error.data.uncertain : []);
  const shown = conflicts
    .slice(0, 15)
    .map((p) =>
      uncertain.has(p)
        ? `not reported by the session's tools: ${humanPath(p)}`
        : `changed since: ${humanPath(p)}`,
    );
  if (conflicts.length > 15) shown.push(`… and ${conflicts.length - 15} more`);
  return shown.join("\n");
}

/** Every path a planned rewind would write, delete or skip, sorted. Pure. */
export function planPaths(plan: RewindReport): string[] {
  return [...new Set([...plan.written, ...plan.deleted, ...plan.skipped.map((s) => s.path)])].sort();
}

/** "All files" (undefined), the files picked, or null when the person cancelled. */
async function chooseSomeFiles(plan: RewindReport): Promise<string[] | undefined | null> {
  const scope = await select({
    message: "Which files?",
    options: [
      { value: "all", label: "all files these turns changed" },
      { value: "some", label: "only some files…" },
    ],
  });
  if (isCancel(scope)) return null;
  if (scope === "all") return undefined;
  const picked = await multiselect({
    message: "Put back which files? (space selects, enter confirms)",
    options: planPaths(plan).map((p) => ({ value: p, label: humanPath(p) })),
    required: true,
  });
  return isCancel(picked) ? null : (picked as string[]);
}
