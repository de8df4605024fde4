import os from "node:os";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { shellQuote } from "../util/shell.js";
import type { AgentName } from "./event.js";

export type Scope = "user" | "project";

/** What `install <agent>` writes and where (each agent's documented hook file and format). */
export interface InstallSpec {
  agent: AgentName;
  label: string;
  file(scope: Scope, projectDir: string): string;
  /** Top-level keys the file needs besides `hooks` (Cursor's `version`). */
  base: Record<string, unknown>;
  /** "nested": event → [{matcher?, hooks: [handler]}]; "flat": event → [handler]. */
  style: "nested" | "flat";
  /** Per event: the group (nested) or handler (flat) to add, running `command`. */
  entries(command: string): Record<string, Record<string, unknown>>;
  /** The agent reads comments and trailing commas in the file (install keeps them). */
  comments?: boolean;
  /** The agent runs an identical handler once when both user and project settings have it. */
  sameCommandOnce?: boolean;
  /**
   * The agent also loads the project file of each directory above the one it starts in, up to
   * its repository's top (Codex: "project .codex/ layers from the project root down to the
   * working directory"): each runs its hooks.
   */
  projectLayers?: boolean;
  /** Things the user still has to do, shown after install. */
  notes: string[];
  /** Said only of an install in a project's settings. */
  projectNotes?: string[];
}

const home = () => os.homedir();

/**
 * Codex's own directory: `CODEX_HOME` when set and not empty, as Codex reads it. Codex takes a
 * relative value against the directory it is started in, so it names another directory in every
 * project: no one file to install into, refused rather than guessed.
 */
export function codexHome(): string {
  const value = process.env.CODEX_HOME;
  if (!value) return path.join(home(), ".codex");
  if (!path.isAbsolute(value))
    throw new GhostcommitError(
      "bad-config",
      `CODEX_HOME is a relative path (${value}), which Codex takes against the directory it is started in: a different one in each project. Set CODEX_HOME to an absolute path, or use --project for this project's .codex/hooks.json; nothing was changed`,
      { key: "CODEX_HOME", source: "environment" },
    );
  return value;
}

/**
 * The hook command: absolute paths to Node and to the CLI entry, quoted, so it runs from an
 * agent's `/bin/sh -c` whose PATH lacks the user's Node version manager.
 */
export function hookCommand(agent: AgentName, node: string, entry: string): string {
  return `${shellQuote(node)} ${shellQuote(entry)} hook ${agent}`;
}

/**
 * True for a handler command this adapter installed, in any version: the bare `ghostcommit hook
 * <agent>` of older releases, or Node plus a ghostcommit entry file; and one written by hand
 * through a package runner (`npx -y ghostcommit hook cursor`), which install replaces and doctor
 * checks as the same hook.
 */
export function isHookCommand(command: unknown, agent: AgentName): boolean {
  if (typeof command !== "string") return false;
  const tail = ` hook ${agent}`;
  if (!command.endsWith(tail)) return false;
  const head = command.slice(0, -tail.length);
  return (
    head === "ghostcommit" ||
    /ghostcommit[^/]*'$/.test(head) ||
    /\/ghostcommit(\.mjs|\.cjs)?$/.test(head) ||
    PACKAGE_RUNNER.test(head)
  );
}

/** `npx -y ghostcommit`, `npx ghostcommit@latest`, `pnpm dlx ghostcommit`, `bunx ghostcommit`, `npm exec -- ghostcommit`. */
const PACKAGE_RUNNER =
  /^(npx|pnpx|bunx|pnpm dlx|yarn dlx|npm exec)( (-y|--yes|--quiet|-q|--))* ghostcommit(@[\w.^~<>=-]+)?$/;

function handler(command: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "command", command, ...extra };
}

/** Codex tools that edit files; `Bash` for builds that route `apply_patch` through the shell. */
const CODEX_TOOLS = "^(apply_patch|Edit|Write|Bash)$";

/** The Claude Code tools after which the hooks take a progress mark: all that can change files. */
const CLAUDE_MARKED_TOOLS = "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*";

export const SPECS: Record<AgentName, InstallSpec> = {
  "claude-code": {
    agent: "claude-code",
    label: "Claude Code",
    file: (scope, dir) =>
      scope === "user"
        ? path.join(home(), ".claude", "settings.json")
        : path.join(dir, ".claude", "settings.json"),
    base: {},
    style: "nested",
    sameCommandOnce: true,
    entries: (command) => ({
      UserPromptSubmit: { hooks: [handler(command, { timeout: 30 })] },
      PreToolUse: {
        matcher: "Write|Edit|MultiEdit|NotebookEdit",
        hooks: [handler(command, { timeout: 30 })],
      },
      // A progress mark after each tool call: what an interrupted turn did. MCP tools
      // (`mcp__<server>__<tool>`) may write files too.
      PostToolUse: {
        matcher: CLAUDE_MARKED_TOOLS,
        hooks: [handler(command, { timeout: 60 })],
      },
      // Fired instead of PostToolUse when the call failed (a Bash command exiting non-zero, an
      // edit refused half-way): it may have changed files all the same.
      PostToolUseFailure: {
        matcher: CLAUDE_MARKED_TOOLS,
        hooks: [handler(command, { timeout: 60 })],
      },
      Stop: { hooks: [handler(command, { timeout: 60 })] },
      // Fired instead of Stop when the turn ends on an API error.
      StopFailure: { hooks: [handler(command, { timeout: 60 })] },
      // /clear or exit: a turn left open by Esc is over (no snapshot: a 1.5 s budget).
      SessionEnd: { hooks: [handler(command)] },
    }),
    notes: ["Claude Code picks up settings changes live (older versions: review them in /hooks)."],
  },
  codex: {
    agent: "codex",
    label: "Codex",
    file: (scope, dir) =>
      scope === "user" ? path.join(codexHome(), "hooks.json") : path.join(dir, ".codex", "hooks.json"),
    projectLayers: true,
    base: {},
    style: "nested",
    entries: (command) => ({
      UserPromptSubmit: { hooks: [handler(command, { timeout: 30 })] },
      PreToolUse: { matcher: CODEX_TOOLS, hooks: [handler(command)] },
      PostToolUse: { matcher: CODEX_TOOLS, hooks: [handler(command, { timeout: 60 })] },
      Stop: { hooks: [handler(command, { timeout: 60 })] },
      // The user interrupted the turn: no Stop follows.
      Interrupt: { hooks: [handler(command, { timeout: 60 })] },
      // Fired instead of Stop when the turn ends on an API error.
      StopFailure: { hooks: [handler(command, { timeout: 60 })] },
    }),
    notes: [
      "Codex runs a hook only after you review and trust it: open /hooks in Codex.",
      "Older Codex builds also need `codex_hooks = true` under `[features]` in ~/.codex/config.toml.",
    ],
  },
  cursor: {
    agent: "cursor",
    label: "Cursor",
    file: (scope, dir) =>
      scope === "user" ? path.join(home(), ".cursor", "hooks.json") : path.join(dir, ".cursor", "hooks.json"),
    base: { version: 1 },
    style: "flat",
    entries: (command) => ({
      beforeSubmitPrompt: { command },
      afterFileEdit: { command },
      // After a shell command or an MCP tool, whose effects are unknown: a progress mark of all.
      afterShellExecution: { command },
      afterMCPExecution: { command },
      // Newer builds delete with a tool of their own, reported by the generic postToolUse.
      postToolUse: { command, matcher: "Delete" },
      stop: { command },
    }),
    notes: ["Restart Cursor to load the hooks (project hooks run in trusted workspaces only)."],
  },
  gemini: {
    agent: "gemini",
    label: "Gemini CLI",
    file: (scope, dir) =>
      scope === "user"
        ? path.join(home(), ".gemini", "settings.json")
        : path.join(dir, ".gemini", "settings.json"),
    base: {},
    style: "nested",
    comments: true,
    sameCommandOnce: true,
    entries: (command) => ({
      BeforeAgent: { hooks: [{ name: "ghostcommit-begin", ...handler(command), timeout: 30000 }] },
      BeforeTool: {
        matcher: "write_file|replace",
        hooks: [{ name: "ghostcommit-touch", ...handler(command) }],
      },
      AfterTool: {
        matcher: "write_file|replace|run_shell_command",
        hooks: [{ name: "ghostcommit-progress", ...handler(command), timeout: 60000 }],
      },
      AfterAgent: { hooks: [{ name: "ghostcommit-end", ...handler(command), timeout: 60000 }] },
      // /clear or exit (Gemini fires no AfterAgent for a Ctrl-C'd turn): that turn is over. /clear
      // waits for this hook, exit does not: no snapshot, only a journal record.
      SessionEnd: { hooks: [{ name: "ghostcommit-session-end", ...handler(command), timeout: 10000 }] },
    }),
    notes: ["Older Gemini CLI builds need `tools.enableHooks: true`."],
    projectNotes: ["Project settings load only in trusted folders."],
  },
};
