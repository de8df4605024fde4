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
export function marksEveryTool(event: HookEvent, projectDir: string): boolean {
  if (event.agent !== "cursor") return MARKS_EVERY_TOOL.has(event.agent);
  return (["user", "project"] as const).some((scope) => {
    const ours = ourHandlersIn(SPECS.cursor.file(scope, projectDir), "cursor");
    return CURSOR_TOOL_EVENTS.every((name) => ours.has(name));
  });
}
