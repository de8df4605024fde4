/** The agents ghostcommit has hook adapters for. */
export type AgentName = "claude-code" | "codex" | "cursor" | "gemini";

/** What a hook event asks ghostcommit to do, whichever agent sent it. */
export type HookAction =
  /** A user prompt: snapshot before a new turn (`turn` when the agent names its turns). */
  | { kind: "begin"; turn?: string; prompt: string }
  /** The agent is about to edit (or just edited) these paths: absolute, or relative to `cwd`. */
  | { kind: "touch"; paths: string[] }
  /** The agent finished its answer: snapshot after the open turn. */
  | { kind: "end" }
  /** Nothing to do (unknown events, session start/end, tools that edit nothing). */
  | { kind: "none" };

/** One hook event, normalized. */
export interface HookEvent {
  /** The agent whose format the payload has (may differ from the adapter that received it). */
  agent: AgentName;
  /** `hook_event_name` as sent. */
  name: string;
  session?: string;
  /** The workspace the payload names (`cwd`, Cursor's `workspace_roots[0]`). */
  cwd?: string;
  /** Sent from a subagent: it may touch paths but never begins or ends turns. */
  subagent: boolean;
  action: HookAction;
  /** Exactly what to print on stdout ("" for nothing). */
  reply: string;
}

export type Payload = Record<string, unknown>;

/** A string field, or undefined when absent, empty or not a string. */
export function str(payload: Payload | undefined, key: string): string | undefined {
  const value = payload?.[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** An object field, or undefined. */
export function obj(payload: Payload | undefined, key: string): Payload | undefined {
  const value = payload?.[key];
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Payload)
    : undefined;
}

/**
 * True when the payload comes from a subagent (Claude Code, Codex). Only `agent_id` counts:
 * Claude Code also sends `agent_type` on the main thread of a session started with `--agent`.
 */
export function fromSubagent(payload: Payload): boolean {
  return str(payload, "agent_id") !== undefined;
}
