import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { STORE_FILES } from "../store/layout.js";
import { ourHandlersIn } from "./hook-check.js";
import { type HookEvent, MARKS_EVERY_TOOL } from "./event.js";
import { SPECS } from "./specs.js";

/** Cursor's events after a tool call that can change files, besides `afterFileEdit`. */
export const CURSOR_TOOL_EVENTS = ["afterShellExecution", "afterMCPExecution"];

/**
 * Whether the hooks that sent `event` mark after every tool call of the agent that can change
 * files, so a change after a turn's last mark is no tool's. Cursor's do once installed by a release
 * that registers its shell and MCP events (user or project `hooks.json`, where Cursor reads them);
 * an older install, or Claude Code's hooks that Cursor runs, mark after file edits alone, and a
 * shell command's files would all look like someone else's.
 */
export function marksEveryTool(event: HookEvent, projectDir: string, storeDir: string): boolean {
  if (event.agent === "codex") return existsSync(path.join(storeDir, STORE_FILES.codexEditsHooked));
  if (event.agent !== "cursor") return MARKS_EVERY_TOOL.has(event.agent);
  return (["user", "project"] as const).some((scope) => {
    const ours = ourHandlersIn(SPECS.cursor.file(scope, projectDir), "cursor");
    return CURSOR_TOOL_EVENTS.every((name) => ours.has(name));
  });
}

/**
 * Codex builds before openai/codex#16732 ran hooks for their shell alone: there a file an
 * apply_patch wrote after the turn's last shell call would look like someone else's. A build that
 * sends an event naming apply_patch hooks every edit, as this release installs it (the shell, the
 * edits): once one has, this store's Codex turns are judged as Claude Code's are, and a file a
 * person saved after the agent's last tool call is no longer taken for the agent's.
 */
export function noteCodexEditHooks(event: HookEvent, storeDir: string): void {
  if (event.agent !== "codex" || !CODEX_EDIT_TOOLS.has(event.tool ?? "")) return;
  const file = path.join(storeDir, STORE_FILES.codexEditsHooked);
  if (existsSync(file)) return;
  try {
    writeFileSync(file, "", { mode: 0o600 });
  } catch {
    // Not known yet: the turns stay judged as before, and the next such event tries again.
  }
}

/** The names Codex gives its file-edit tool in hook events (`Edit`/`Write` are matcher aliases). */
const CODEX_EDIT_TOOLS = new Set(["apply_patch", "Edit", "Write"]);
