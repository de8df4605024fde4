import os from "node:os";
import path from "node:path";
import type { AgentName } from "./event.js";

export type Scope = "user" | "project";

/** What `install <agent>` writes and where (each agent's documented hook file and format). */
export interface InstallSpec {
  agent: AgentName;
  label: string;
  /** The hook command; install and uninstall recognize their entries by it, so it never changes. */
  command: string;
  file(scope: Scope, projectDir: string): string;
  /** Top-level keys the file needs besides `hooks` (Cursor's `version`). */
  base: Record<string, unknown>;
  /** "nested": event → [{matcher?, hooks: [handler]}]; "flat": event → [handler]. */
  style: "nested" | "flat";
  /** Per event: the group (nested) or handler (flat) to add. */
  entries: Record<string, Record<string, unknown>>;
  /** Things the user still has to do, shown after install. */
  notes: string[];
}

const home = () => os.homedir();

function command(agent: AgentName): string {
  return `ghostcommit hook ${agent}`;
}

function handler(agent: AgentName, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "command", command: command(agent), ...extra };
}

export const SPECS: Record<AgentName, InstallSpec> = {
  "claude-code": {
    agent: "claude-code",
    label: "Claude Code",
    command: command("claude-code"),
    file: (scope, dir) =>
      scope === "user"
        ? path.join(home(), ".claude", "settings.json")
        : path.join(dir, ".claude", "settings.json"),
    base: {},
    style: "nested",
    entries: {
      UserPromptSubmit: { hooks: [handler("claude-code", { timeout: 30 })] },
      PreToolUse: {
        matcher: "Write|Edit|MultiEdit|NotebookEdit",
        hooks: [handler("claude-code", { timeout: 30 })],
      },
      Stop: { hooks: [handler("claude-code", { timeout: 60 })] },
    },
    notes: ["Claude Code picks up settings changes live (older versions: review them in /hooks)."],
  },
  codex: {
    agent: "codex",
    label: "Codex",
    command: command("codex"),
    file: (scope, dir) =>
      scope === "user"
        ? path.join(process.env.CODEX_HOME || path.join(home(), ".codex"), "hooks.json")
        : path.join(dir, ".codex", "hooks.json"),
    base: {},
    style: "nested",
    entries: {
      UserPromptSubmit: { hooks: [handler("codex", { timeout: 30 })] },
      PreToolUse: { matcher: "^apply_patch$", hooks: [handler("codex")] },
      Stop: { hooks: [handler("codex", { timeout: 60 })] },
    },
    notes: [
      "Codex runs a hook only after you review and trust it: open /hooks in Codex.",
      "Older Codex builds also need `[features]\\ncodex_hooks = true` in ~/.codex/config.toml.",
    ],
  },
  cursor: {
    agent: "cursor",
    label: "Cursor",
    command: command("cursor"),
    file: (scope, dir) =>
      scope === "user" ? path.join(home(), ".cursor", "hooks.json") : path.join(dir, ".cursor", "hooks.json"),
    base: { version: 1 },
    style: "flat",
    entries: {
      beforeSubmitPrompt: { command: command("cursor") },
      afterFileEdit: { command: command("cursor") },
      stop: { command: command("cursor") },
    },
    notes: ["Restart Cursor to load the hooks (project hooks run in trusted workspaces only)."],
  },
  gemini: {
    agent: "gemini",
    label: "Gemini CLI",
    command: command("gemini"),
    file: (scope, dir) =>
      scope === "user"
        ? path.join(home(), ".gemini", "settings.json")
        : path.join(dir, ".gemini", "settings.json"),
    base: {},
    style: "nested",
    entries: {
      BeforeAgent: { hooks: [{ name: "ghostcommit-begin", ...handler("gemini"), timeout: 30000 }] },
      BeforeTool: {
        matcher: "write_file|replace",
        hooks: [{ name: "ghostcommit-touch", ...handler("gemini") }],
      },
      AfterAgent: { hooks: [{ name: "ghostcommit-end", ...handler("gemini"), timeout: 60000 }] },
    },
    notes: [
      "Project settings load only in trusted folders; older Gemini CLI builds need `tools.enableHooks: true`.",
    ],
  },
};
