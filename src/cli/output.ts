import pc from "picocolors";
import { errorDocument, exitStatusFor, messageWith, reportable } from "../errors.js";
import type { Excluded, SkippedPath } from "../types.js";
import { failedSkips } from "../restore/outcome.js";

/** Colours only when stdout is a terminal and NO_COLOR is unset. */
export const color = pc.createColors(
  Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb",
);

export interface CommandOutput {
  /** The one JSON document printed with --json. */
  json: unknown;
  /** Lines for people. */
  human: () => string;
  exitCode?: number;
  /** Why the exit status is not 0 when the command still did its work: said as errors are. */
  problem?: string;
}

/** Prints a command's result in the requested form and sets the exit status. */
export function emit(output: CommandOutput, asJson: boolean): void {
  if (asJson) process.stdout.write(`${JSON.stringify(output.json, null, 2)}\n`);
  else {
    const text = output.human();
    if (text) process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }
  // In a chat only stdout is shown: there the reason goes with the result (see emitError).
  if (output.problem)
    (inChat && !asJson ? process.stdout : process.stderr).write(
      `ghostcommit: ${humanLines(output.problem)}\n`,
    );
  if (output.exitCode) process.exitCode = output.exitCode;
}

/**
 * Exit status 1 for a restore, rewind or redo that could not write or delete some paths (the rest is done),
 * said on stderr as failures are; excluded paths do not count.
 */
export function skipStatus(report: { skipped: SkippedPath[]; dryRun?: boolean }): Partial<CommandOutput> {
  const failed = failedSkips(report);
  if (failed.length === 0) return {};
  const reasons = [...new Set(failed.map((s) => s.reason))].join(", ");
  // A failed write or deletion alike leaves the path as it was; a dry run's plan says it would.
  const what = report.dryRun
    ? failed.length === 1
      ? `${failed[0].path} would be left as it is`
      : `${failed.length} paths would be left as they are`
    : failed.length === 1
      ? `${failed[0].path} was left as it was`
      : `${failed.length} paths were left as they were`;
  return {
    exitCode: 1,
    problem: `${what} (${reasons}), listed under skipped; ${report.dryRun ? "nothing was changed" : "the rest was done"}`,
  };
}

/**
 * `--in-chat`: the command runs for an agent's chat (a Claude Code slash command's `!` line), which
 * shows only a command's stdout, and only when it exits 0: a refusal there must be read too.
 */
export const IN_CHAT = "--in-chat";
let inChat = false;
export function runInChat(): void {
  inChat = true;
}

/**
 * Reports an error: `ghostcommit: message` on stderr, and with --json an error document on stdout.
 * Under `--in-chat` the message goes to stdout instead, unless --json: stdout then holds the one
 * JSON document a reader parses, which says the error itself.
 */
export function emitError(thrown: unknown, asJson: boolean): number {
  const error = reportable(thrown);
  const status = exitStatusFor(error);
  // A message may name what came from elsewhere (a session id, a remote's): never sent raw.
  (inChat && !asJson ? process.stdout : process.stderr).write(
    `ghostcommit: ${humanLines(messageWith(error, "--force"))}\n`,
  );
  if (asJson) process.stdout.write(`${JSON.stringify(errorDocument(error, "--force"), null, 2)}\n`);
  return status;
}

const REASON_TEXT: Record<Excluded["reason"], string> = {
  "dependency-dir": "dependency dir",
  "large-file": "large file",
  "large-dir": "large directory",
  "ignore-file": ".ghostignore",
  "nested-repo": "nested repository",
  budget: "over budget",
  unreadable: "unreadable",
  store: "ghostcommit's data directory",
};

const DIR_REASONS = new Set<Excluded["reason"]>(["dependency-dir", "large-dir", "nested-repo", "store"]);

/** "1 file", "5,000 files". */
export function nFiles(n: number): string {
  return counted(n, "file");
}

/** "1 turn", "3 turns": a count with its noun in the right number. */
export function counted(n: number, noun: string): string {
  return `${formatCount(n)} ${n === 1 ? noun : `${noun}s`}`;
}

/** "turn 2", "turns 2, 3": a list of turn ids after its noun in the right number. */
export function turnList(turns: string[]): string {
  return turnsNamed(turns);
}

import { formatBytes, formatCount, humanText, quotedPath, turnsNamed } from "../util/format.js";

export { humanText };

export { formatBytes, formatCount };

/** "excluded node_modules/ (dependency dir, 5,000 files)". */
export function formatExcluded(entries: Excluded[], limit = 20): string[] {
  const lines = entries.slice(0, limit).map((e) => {
    const isDir = DIR_REASONS.has(e.reason) || (e.files ?? 1) > 1 ? "/" : "";
    const details = [REASON_TEXT[e.reason]];
    // A directory's count is said even when it is one file: what a person weighs before including it.
    if (e.files !== undefined && (e.files !== 1 || isDir)) details.push(counted(e.files, "file"));
    if (e.bytes !== undefined) details.push(formatBytes(e.bytes));
    return `  ${color.yellow("excluded")} ${humanPath(`${e.path}${isDir}`)} (${details.join(", ")})`;
  });
  if (entries.length > limit) lines.push(`  … and ${formatCount(entries.length - limit)} more (see --json)`);
  return lines;
}

export function shortId(id: string): string {
  return id.slice(0, 12);
}

/** Relative age for people: "3 min ago". */
export function age(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

/**
 * Shows a note on stderr when work on a terminal takes over a second, so a person knows it is
 * not stuck. Returns a function that clears it.
 */
export function progress(label: string): () => void {
  if (!process.stderr.isTTY) return () => {};
  let shown = false;
  const timer = setTimeout(() => {
    shown = true;
    process.stderr.write(`${color.dim(`ghostcommit: ${label}…`)}`);
  }, 1000);
  return () => {
    clearTimeout(timer);
    if (shown) process.stderr.write("\r\x1b[K");
  };
}

/** Free text of several lines (an error, a finding of doctor's): each line as `humanText` shows it. */
export function humanLines(text: string): string {
  return text.split("\n").map(humanText).join("\n");
}

/** At most `max` characters, with "…" where it was cut; never between the two halves of an emoji. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\ud800-\udbff]/.test(text[end - 1] ?? "")) end--;
  return `${text.slice(0, end)}…`;
}

/** A path for human output, quoted as git quotes it where needed; JSON output keeps names as they are. */
export const humanPath = quotedPath;

/** The first few paths on one line, and how many more (`--json` lists them all). */
export function fewPaths(paths: string[], limit = 5): string {
  const more = paths.length > limit ? `, … (${formatCount(paths.length - limit)} more)` : "";
  return paths.slice(0, limit).map(humanPath).join(", ") + more;
}
