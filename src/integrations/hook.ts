import { existsSync } from "node:fs";
import path from "node:path";
import { openWorkspace, type Workspace } from "../workspace.js";
import type { StoreKind } from "../config.js";
import type { SessionHandle, TurnBegun } from "../types.js";
import { isRepeatedBegin } from "../session/context.js";
import { displayPath, isTooBroad } from "../paths.js";
import { CURSOR_CONTINUE } from "./agents/cursor.js";
import { AGENTS, type AgentName, type HookEvent } from "./event.js";
import { marksEveryTool, noteCodexEditHooks } from "./every-tool-marked.js";
import { otherHooksBeside } from "./hooks-beside.js";
import { workspacePath } from "./hook-paths.js";
import { PARSERS, parsePayload } from "./hook-event.js";
import { appendHookLog, globalHookLog, type HookLogEntry } from "../maintenance/hook-log.js";
import { canTellModel, undoNotice } from "./undo-notice.js";
import { rememberWorkspace, sessionRecord, touchSessionRecord } from "./session-dirs.js";
import { logFoldersLeftOut, logNotRecorded } from "./cursor-roots.js";
import { awayMessage, envDir, ownDir, workTreeOfCwd } from "./hook-dirs.js";
import {
  agentShowsNotices,
  noSnapshotsNotice,
  PromptAnswer,
  reply,
  snapshotFailedNotice,
  storeChangedMessage,
} from "./user-notices.js";
import { storeCannotBeMade } from "../store/layout.js";
import { reportable } from "../errors.js";
import { collectAnnouncements } from "../util/announce.js";
import { processAncestors } from "../util/process-tree.js";

/** What to print when the input cannot be understood: whatever lets the agent go on. */
const FALLBACK_REPLY: Record<AgentName, string> = {
  "claude-code": "",
  codex: "",
  cursor: CURSOR_CONTINUE,
  gemini: "{}",
};

export interface HookOptions {
  /** Workspace override (`-C`); otherwise the event's own. */
  dir?: string;
  store?: StoreKind;
}

/**
 * Handles one hook event: does at most one snapshot's work and prints exactly the reply the agent
 * needs, with what the user must know of that work. Never throws; every failure goes to the hook
 * log (`doctor` shows it).
 */
export async function runHook(
  agentArg: string | undefined,
  input: string,
  options: HookOptions,
): Promise<void> {
  const agent = AGENTS.find((a) => a === agentArg);
  if (!agent) {
    await appendHookLog(globalHookLog, {
      level: "error",
      agent: agentArg ?? "",
      message: `unknown agent "${agentArg ?? ""}" (use one of ${AGENTS.join(", ")})`,
    });
    return;
  }
  const payload = parsePayload(input);
  if (!payload) {
    reply(FALLBACK_REPLY[agent]);
    const dir = options.dir ?? envDir(agent) ?? ownDir(agent);
    const excerpt = JSON.stringify(input.slice(0, 120));
    await logFor(options, { level: "error", agent, message: `not a JSON hook event: ${excerpt}` }, dir);
    return;
  }
  const event = PARSERS[agent](payload);
  const answer = new PromptAnswer(event);
  // An agent that cannot show the user a notice gets its fixed reply before any work (whatever
  // becomes of it, Cursor's prompt goes on); the others get theirs when the work is done.
  if (!agentShowsNotices(agent)) answer.send();
  try {
    await act(event, options, answer);
  } finally {
    answer.send();
  }
}

/** Does the event's snapshot work; what the user must know goes in `answer`, unless already sent. */
async function act(event: HookEvent, options: HookOptions, answer: PromptAnswer): Promise<void> {
  const action = event.action;
  // Subagents share the parent's session: their turns are not the user's.
  if (action.kind === "none" || (event.subagent && !["touch", "progress"].includes(action.kind))) return;
  // One session, one workspace: fixed by its first event, whatever directory the agent `cd`s into.
  const record = event.session && !options.dir ? sessionRecord(event.agent, event.session) : {};
  const fixed = record.dir;
  if (action.kind === "abandon" && !fixed && !options.dir) return; // never seen: no turn to end
  const projectDir = event.projectDir ?? envDir(event.agent);
  const dir =
    options.dir ??
    fixed ??
    (await workTreeOfCwd(projectDir, event.cwd)) ??
    projectDir ??
    event.cwd ??
    ownDir(event.agent);
  const base = { agent: event.agent, event: event.name, session: event.session, dir };
  // Why a prompt's work gets no snapshot: the person expects undo, and a log alone goes unread.
  const toldAtPrompt = (why: string): string[] =>
    action.kind === "begin" && event.session && agentShowsNotices(event.agent)
      ? noSnapshotsNotice(event.agent, event.session, why)
      : [];
  // An agent started in ~ or / would snapshot everything the user owns on every prompt (-C naming
  // one is refused too: the library captures neither).
  if (dir === undefined || isTooBroad(dir)) {
    const message = dir
      ? `not snapshotting ${dir} (home or root directory); start the agent in a project or pass -C`
      : "not snapshotting: the event names no workspace (no workspace_roots)";
    await appendHookLog(globalHookLog, { ...base, level: "warn", message });
    answer.notices = toldAtPrompt(message);
    return;
  }
  let ws: Workspace;
  try {
    ws = await openWorkspace({ cwd: dir, store: options.store });
  } catch (error) {
    const why = messageOf(error);
    await appendHookLog(globalHookLog, { ...base, level: "error", message: `${dir}: ${why}` });
    answer.notices = toldAtPrompt(why);
    return;
  }
  if (!ws.enabled) return;
  const log = (level: HookLogEntry["level"], message: string) =>
    appendHookLog(ws.logFile, { ...base, level, message });
  if (!event.session) {
    await log("error", "the event has no session id");
    return;
  }
  const shows = agentShowsNotices(event.agent);
  const warn = async (message: string) => {
    await log("warn", message);
    if (shows) answer.notices.push(`ghostcommit: ${message}`);
  };
  if (!options.dir) {
    const kindThen = fixed ? record.kind : undefined;
    // The agent's process (above the hook's shell) tells its MCP server which session is its own.
    const procs = action.kind === "begin" ? await processAncestors() : undefined;
    if (!fixed || kindThen !== ws.kind)
      await rememberWorkspace(event.agent, event.session, ws.root, ws.kind, procs);
    else if (action.kind === "begin") await touchSessionRecord(event.agent, event.session, procs);
    if (kindThen !== undefined && kindThen !== ws.kind) {
      // A folder's new repository store takes over its plain store's history when it is made
      // (nothing to tell then); one made before (the folder was a repository once) has not.
      const kept = kindThen === "plain" && (await ws.session(event.session).log()).length > 0;
      if (!kept) await warn(storeChangedMessage(ws.root, event.session, kindThen));
    }
  }
  // A conversation's first event: say which folders of a multi-root workspace have no undo.
  if (!fixed && !options.dir && event.otherRoots)
    await logFoldersLeftOut(ws.root, ws.logFile, base, event.otherRoots);
  const storeDir = path.dirname(ws.logFile);
  // A store that cannot be made (a data directory that is a file, or read-only) is told before the
  // first snapshot fails where the person cannot see it.
  const unusable = shows && action.kind === "begin" ? storeCannotBeMade(storeDir) : null;
  if (unusable) {
    answer.notices.push(...toldAtPrompt(unusable));
    return; // its log is in that store too
  }
  const stopCollecting = shows ? collectAnnouncements(answer.notices) : () => {};
  try {
    const session = ws.session(event.session);
    if (action.kind === "begin") {
      const away = fixed ? await awayMessage(fixed, ws.root, event.cwd) : null;
      if (away) await warn(away);
      const told = canTellModel(event) ? await undoNotice(ws, event).catch(() => null) : null;
      const begun = await begin(session, action.turn, action.prompt);
      // Said once: a second run of this prompt's hook (installed twice) found the turn begun.
      if (!isRepeatedBegin(begun)) answer.context = told;
      if (begun.unbegunBefore) {
        const which =
          begun.unbegunBefore === 1
            ? "the previous prompt has"
            : `the previous ${begun.unbegunBefore} prompts have`;
        const why = `${which} no undo: the snapshot before ${begun.unbegunBefore === 1 ? "it" : "each"} never finished (it failed, a full disk say, or the agent stopped a hook that outlasted its timeout, as a large folder's first snapshot can). What ${begun.unbegunBefore === 1 ? "it" : "they"} changed is in no turn, and rewinding an earlier turn refuses those files`;
        await log("error", why);
        if (shows) answer.notices.push(`ghostcommit: ${why}`);
      }
    } else if (action.kind === "abandon") {
      await session.abandonTurn();
    } else if (action.kind === "end") {
      const everyToolMarked = marksEveryTool(event, event.projectDir ?? ws.root, storeDir);
      // No turn to end, but a prompt whose turn never began: its stop says it ran no longer.
      if (action.extend) {
        if (!(await session.extendTurn({ prompt: action.prompt, everyToolMarked })))
          await session.abandonTurn();
      } else {
        const open = await session.openTurn();
        const late = action.turn !== undefined && action.turn !== open;
        // A late or repeated stop of a turn that already ended must not end the next one early.
        if (late && (await session.log()).some((t) => t.turn === action.turn))
          await log("warn", `ignored a stop of turn ${action.turn}, which already ended`);
        else if (open !== null) await session.endTurn(open, { everyToolMarked });
        else await session.abandonTurn();
      }
    } else {
      noteCodexEditHooks(event, storeDir);
      // Relative paths are the agent's: against the directory it is in now (Gemini's: its project's).
      const from = event.pathsFrom === "project" ? (projectDir ?? dir) : (event.cwd ?? dir);
      const paths: string[] = [];
      for (const given of action.paths ?? []) {
        const rel = workspacePath(ws.root, dir, from, given);
        if (rel === ".git") await log("warn", `ignored a path in .git: ${given}`);
        // An edit nothing can undo: doctor shows it, by the path it is (also in the other folder
        // it is in; a relative one is the agent's directory's, which may be another repository).
        else if (rel === null)
          await logNotRecorded(ws.root, ws.logFile, base, {
            given,
            from,
            others: event.otherRoots ?? [],
          });
        else if (!paths.includes(rel)) paths.push(rel);
      }
      // Absolute under the real root: the handle resolves relative paths against the cwd it was opened with.
      const absolute = paths.map((p) => path.join(ws.root, p));
      // The agent's tool calls: after a stop another hook blocked, they continue that turn. After an
      // edit, another hook of the event (a formatter) may rewrite the file once the mark has read it.
      const written =
        action.kind === "progress" ? action.paths !== undefined && !action.unwritten : action.edited;
      const hooksBeside = written === true && otherHooksBeside(event, event.projectDir ?? ws.root);
      const continuing = { continuing: true, hooksBeside };
      if (action.kind === "progress") {
        const { unwritten } = action;
        if (action.paths === undefined) await session.progress(undefined, continuing);
        else if (absolute.length > 0) await session.progress(absolute, { ...continuing, unwritten });
      } else if (absolute.length > 0) {
        // A mark read beside the touch: what the file holds before the edit runs, or after it.
        const mark = action.before ? "before" : action.edited ? "after" : undefined;
        const touched = await session.touched(absolute, { edited: action.edited, ...continuing, mark });
        const { leftOut = [] } = touched;
        // An edit nothing can undo: said (doctor shows it) instead of left out silently.
        for (const rel of leftOut)
          await log(
            "error",
            `not recorded: ${rel} is in a nested repository or submodule, which snapshots of ${ws.root} leave out ("nestedRepos": "capture" takes them in)`,
          );
        // No turn to attribute it to (its prompt event never came, or its hook never finished):
        // no rewind can undo it.
        if (touched.outsideTurn)
          await log(
            "error",
            `not undoable: ${paths.map(displayPath).join(", ")}, named by an edit tool while no turn was open (${touched.unbegunPrompt ? "the snapshot before its prompt never finished: the agent stopped the prompt's hook, or it failed" : "the agent sent no prompt event before it; hooks installed during a conversation take effect at its next prompt"})`,
          );
      }
    }
  } catch (error) {
    const why = messageOf(error);
    await log("error", why);
    const notice = shows && !answer.isSent ? snapshotFailedNotice(action, error, why) : null;
    if (notice) answer.notices.push(notice);
  } finally {
    stopCollecting();
  }
}

/**
 * Begins a turn (ending a still-open one first; beginning the open turn again is a no-op). Without
 * an agent-given id, numbers continue after the highest so far, rewound turns included.
 */
async function begin(session: SessionHandle, turn: string | undefined, prompt: string): Promise<TurnBegun> {
  const id = turn ?? String(nextTurnNumber((await session.log()).map((t) => t.turn)));
  return session.beginTurn(id, { prompt });
}

/** 1 + the highest numeric turn id (1 for none). */
export function nextTurnNumber(turns: string[]): number {
  let max = 0;
  for (const turn of turns) if (/^\d+$/.test(turn)) max = Math.max(max, Number(turn));
  return max + 1;
}

/**
 * Logs to the store of `dir` (silently nothing when ghostcommit is disabled there), else globally;
 * never creates a store in the home or root directory, nor without a directory.
 */
async function logFor(options: HookOptions, entry: Omit<HookLogEntry, "t">, dir?: string): Promise<void> {
  if (dir === undefined || isTooBroad(dir)) {
    await appendHookLog(globalHookLog, { ...entry, dir });
    return;
  }
  try {
    const ws = await openWorkspace({ cwd: dir, store: options.store });
    // An event that names no workspace makes no store: its directory is only where the hook ran.
    if (!existsSync(path.dirname(ws.logFile))) await appendHookLog(globalHookLog, { ...entry, dir });
    else if (ws.enabled) await appendHookLog(ws.logFile, entry);
  } catch {
    await appendHookLog(globalHookLog, { ...entry, dir });
  }
}

function messageOf(error: unknown): string {
  const reported = reportable(error); // a system error says what its code means
  return reported instanceof Error ? reported.message : String(reported);
}
