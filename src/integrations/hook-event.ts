import { parseClaude } from "./agents/claude.js";
import { parseCodex } from "./agents/codex.js";
import { parseCursor } from "./agents/cursor.js";
import { parseGemini } from "./agents/gemini.js";
import { AGENTS, type AgentName, type HookEvent, type Payload } from "./event.js";

/**
 * Reading an agent's hook event: light enough for the command-line loader, which reads a bare
 * `hook <agent>` call's event before the bundle loads to know whether it captures (see
 * `capturesWholeWorkspace`), and shared with the hook itself.
 */

export const PARSERS: Record<AgentName, (payload: Payload) => HookEvent> = {
  "claude-code": parseClaude,
  codex: parseCodex,
  cursor: parseCursor,
  gemini: parseGemini,
};

export function parsePayload(text: string): Payload | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Payload)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the event takes a snapshot of the whole workspace: a turn's begin or end, or the
 * progress mark after a shell tool (an edit tool's reads only the files it names). A guess made
 * before the hook knows its workspace: it only decides whether a status is started ahead, which
 * the capture takes only if it is the very status it would run.
 */
export function capturesWholeWorkspace(agentArg: string, input: string): boolean {
  const agent = AGENTS.find((a) => a === agentArg);
  const payload = agent ? parsePayload(input) : undefined;
  if (!agent || !payload) return false;
  const { action, subagent } = PARSERS[agent](payload);
  if (action.kind === "begin" || action.kind === "end") return !subagent;
  return action.kind === "progress" && action.paths === undefined;
}
