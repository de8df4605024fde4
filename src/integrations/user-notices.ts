import { randomBytes } from "node:crypto";
import { promises as fs, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { STORE_FILES } from "../store/layout.js";
import type { HookEvent } from "./event.js";
import { readTextOrEmpty } from "../util/small-files.js";
import { newToSession } from "./session-dirs.js";

/**
 * Announcements for the person using the agent (see util/announce.ts). A hook answers before its
 * snapshot work, so what that work announces is kept in the store and shown with the workspace's
 * next answer, in the `systemMessage` field Claude Code, Codex and Gemini CLI show the user:
 * "Warning message shown to the user" (code.claude.com/docs/en/hooks, common JSON output fields),
 * read into every event's universal output by Codex (codex-rs/hooks/src/engine/output_parser.rs),
 * "Displayed immediately to the user in the terminal" (gemini-cli docs/hooks/reference.md).
 * Cursor's answers have no such field: there they stay on stderr.
 */
const SHOWN_BY: ReadonlySet<HookEvent["agent"]> = new Set(["claude-code", "codex", "gemini"]);

export function agentShowsNotices(agent: HookEvent["agent"]): boolean {
  return SHOWN_BY.has(agent);
}

function noticesFile(storeDir: string): string {
  return path.join(storeDir, STORE_FILES.pendingNotices);
}

/** Keeps announcements for the next answer (one JSON string per line, appended). */
export async function keepNotices(storeDir: string, texts: string[]): Promise<void> {
  if (texts.length === 0) return;
  const lines = texts.map((text) => `${JSON.stringify(text)}\n`).join("");
  await fs.appendFile(noticesFile(storeDir), lines, { mode: 0o600 }).catch(() => {});
}

/**
 * Takes the kept announcements, once: the file is renamed away first, so of two hooks running at
 * once only one shows them.
 */
export async function takeNotices(storeDir: string): Promise<string[]> {
  const file = noticesFile(storeDir);
  // Named like the store's other temp files, which the next capture removes should this die.
  const taken = `${file}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  // Synchronous: every prompt's hook looks, before its snapshot starts.
  try {
    renameSync(file, taken);
  } catch {
    return []; // none kept (the usual case: one failed rename)
  }
  const text = readTextOrEmpty(taken);
  rmSync(taken, { force: true });
  const notices: string[] = [];
  for (const line of text.split("\n")) {
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "string" && !notices.includes(value)) notices.push(value);
    } catch {
      // an empty or torn line
    }
  }
  return notices;
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
 * The event's stdout answer, sent once, before any snapshot work. It carries announcements kept
 * for the user since the workspace's last answer (see user-notices.ts), and a prompt event whose
 * agent takes context for the model also waits until the session is read (a rewind since the last
 * prompt is told).
 */
export class PromptAnswer {
  private sent = false;
  notices: string[] = [];

  constructor(private readonly event: HookEvent) {}

  send(notice: string | null): void {
    if (this.sent) return;
    this.sent = true;
    reply(withNotices(notice ?? this.event.reply, this.notices));
  }
}

export function reply(text: string): void {
  if (text) process.stdout.write(`${text}\n`);
}
