import { humanText } from "../util/format.js";
import { GhostcommitError } from "../errors.js";
import type { HookEvent } from "./event.js";
import { newToSession } from "./session-dirs.js";

/**
 * Announcements for the person using the agent (see util/announce.ts), and the failures of a
 * hook's own snapshot work: the agent waits for the hook to exit anyway, so where it shows the user
 * a notice the answer waits for that work and carries them, in the `systemMessage` field Claude
 * Code, Codex and Gemini CLI show the user:
 * "Warning message shown to the user" (code.claude.com/docs/en/hooks, common JSON output fields),
 * read into every event's universal output by Codex (codex-rs/hooks/src/engine/output_parser.rs),
 * "Displayed immediately to the user in the terminal" (gemini-cli docs/hooks/reference.md).
 * Cursor's answers have no such field: there they stay on stderr.
 */
const SHOWN_BY: ReadonlySet<HookEvent["agent"]> = new Set(["claude-code", "codex", "gemini"]);

export function agentShowsNotices(agent: HookEvent["agent"]): boolean {
  return SHOWN_BY.has(agent);
}

/** The agent's answer with the announcements added as its `systemMessage`. */
export function withNotices(reply: string, notices: string[]): string {
  if (notices.length === 0) return reply;
  let answer: Record<string, unknown> = {};
  try {
    const parsed: unknown = reply.trim() === "" ? {} : JSON.parse(reply);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      answer = parsed as Record<string, unknown>;
    else return reply;
  } catch {
    return reply; // a plain-text answer (context for the model) is left as it is
  }
  return JSON.stringify({ ...answer, systemMessage: notices.join("\n") });
}

/**
 * Why a session's work gets no snapshot, for its next answer: told at the first prompt it happens
 * at, and again only when the reason changes (see `newToSession`), not at every prompt.
 */
export function noSnapshotsNotice(agent: HookEvent["agent"], session: string, why: string): string[] {
  return newToSession(agent, session, why)
    ? [`ghostcommit: no snapshots of this session's work: ${why}`]
    : [];
}

/**
 * What an event whose snapshot work failed (`why`) tells the person, who relies on undo: on a
 * full disk the log that `doctor` reads could not be written either. Null where the failure left
 * no hole in undo: a progress mark, or a record of files already edited, is made good by the
 * turn's end, and an event the session refuses (a finished turn's id sent again) is the agent's
 * repeat, whose work went to that turn.
 */
export function snapshotFailedNotice(
  action: HookEvent["action"],
  error: unknown,
  why: string,
): string | null {
  if (error instanceof GhostcommitError && error.code === "bad-input") return null;
  const what =
    action.kind === "begin"
      ? "no snapshot before this prompt's work, so this turn is not recorded (what it changes is in no turn, and rewinding an earlier turn refuses those files)"
      : action.kind === "end"
        ? "no snapshot at the end of this turn (the next prompt closes it, as after an interrupt)"
        : action.kind === "touch" && !action.edited
          ? "the files this tool is about to change were not captured first (a rewind cannot bring back their content before it)"
          : null;
  return what === null ? null : `ghostcommit: ${what}: ${why}`;
}

/**
 * The event's stdout answer, sent once: the event's fixed reply, or `context` for the model (a
 * prompt after a rewind), with the notices for the user.
 */
export class PromptAnswer {
  private sent = false;
  notices: string[] = [];
  /** What the model is told instead of the fixed reply (see undo-notice.ts). */
  context: string | null = null;

  constructor(private readonly event: HookEvent) {}

  get isSent(): boolean {
    return this.sent;
  }

  send(): void {
    if (this.sent) return;
    this.sent = true;
    reply(withNotices(this.context ?? this.event.reply, this.notices));
  }
}

export function reply(text: string): void {
  if (text) process.stdout.write(`${text}\n`);
}

/**
 * A folder that stopped being a repository mid-session, or became one whose store existed already
 * (a new one takes over the folder's history), is another workspace with its own store: the
 * session's turns so far, and a turn open then, stay in the old one, which this directory no
 * longer opens. Said once, so the person does not count on rewinding them.
 */
export function storeChangedMessage(root: string, session: string, kindThen: "git" | "plain"): string {
  const became = kindThen === "plain" ? "became a git repository" : "is no longer a git repository";
  return `${root} ${became} during session ${humanText(session)}: its turns until then (and one open then) cannot be rewound from here; the session's next turns are recorded as usual`;
}
