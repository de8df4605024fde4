/** The agents ghostcommit has hook adapters for. */
export type AgentName = "claude-code" | "codex" | "cursor" | "gemini";

export const AGENTS: AgentName[] = ["claude-code", "codex", "cursor", "gemini"];

/** What a hook event asks ghostcommit to do, whichever agent sent it. */
export type HookAction =
  /** A user prompt: snapshot before a new turn (`turn` when the agent names its turns). */
  | { kind: "begin"; turn?: string; prompt: string }
  /**
   * The agent is about to edit these paths (absolute, or relative to `cwd`); `edited`: it already
   * did, so their before-state can no longer be read (and this is a progress mark too); `before`:
   * a mark of what they hold just before the tool runs (a person's save then is told apart).
   */
  | { kind: "touch"; paths: string[]; edited?: boolean; before?: true }
  /** A tool call finished: a progress mark of the named paths, or of everything (a shell tool). */
  | { kind: "progress"; paths?: string[]; unwritten?: true }
  /**
   * The agent finished its answer: snapshot after the open turn. `extend`: the agent went on after
   * another hook blocked its stop, and this later stop moves the end of that same turn.
   */
  | {
      kind: "end";
      extend?: boolean;
      /** With `extend`, the prompt the stop answers (Gemini: its retry began a turn of its own). */
      prompt?: string;
      /** The turn the stop is for, when the agent names it (Cursor's `generation_id`). */
      turn?: string;
    }
  /**
   * The conversation ended (cleared, exited): an open turn is over, as after an interrupt. No
   * snapshot: the agent allows such hooks very little time.
   */
  | { kind: "abandon" }
  /** Nothing to do (unknown events, session start, tools that edit nothing). */
  | { kind: "none" };

/** One hook event, normalized. */
export interface HookEvent {
  /** The agent whose format the payload has (may differ from the adapter that received it). */
  agent: AgentName;
  /** `hook_event_name` as sent. */
  name: string;
  /** The tool a tool event is for (`tool_name`), as sent. */
  tool?: string;
  session?: string;
  /** The directory the agent is in (it follows the agent's `cd`). */
  cwd?: string;
  /**
   * What a relative path a tool names is relative to: the agent's directory (`cwd`, the default),
   * or its project directory (Gemini CLI resolves its file tools' paths against the directory it
   * was started in, whatever its shell's `cd`).
   */
  pathsFrom?: "cwd" | "project";
  /** The project directory the payload names (Cursor's `workspace_roots[0]`). */
  projectDir?: string;
  /** A multi-root Cursor workspace's other folders (`workspace_roots` after the first). */
  otherRoots?: string[];
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

/** The turn-end action: a stop that follows a blocked stop (`stop_hook_active`) extends the turn. */
export function endAction(payload: Payload): HookAction {
  return payload.stop_hook_active === true ? { kind: "end", extend: true } : { kind: "end" };
}

/**
 * Agents whose installed hooks take a progress mark after every built-in tool call that can
 * change files (Claude Code's PostToolUse, Gemini CLI's AfterTool, shell tools included): a change
 * after a turn's last mark, to a path no call reported since, is no tool call's. Codex is once a
 * store has seen its build hook apply_patch (builds before openai/codex#16732 hooked only its
 * shell), Cursor where its hooks run ours after shell commands too (see `marksEveryTool`).
 */
export const MARKS_EVERY_TOOL: ReadonlySet<AgentName> = new Set<AgentName>(["claude-code", "gemini"]);
