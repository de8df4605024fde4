import path from "node:path";
import { runsFor, settingsFile, settingsHandlers, settingsIn } from "./hook-check.js";
import type { HookEvent } from "./event.js";
import { isHookCommand, SPECS } from "./specs.js";

/**
 * Whether the agent runs another command hook beside ghostcommit's for this event of this tool
 * (a formatter after an edit: Claude Code's documented PostToolUse example, Cursor's
 * afterFileEdit), which may rewrite the file the tool edited after ghostcommit's mark has read it.
 * Only then is such a rewrite taken for the tool call's own (see `rewrittenByToolHooks`): without
 * one, a change soon after the agent's edit is a person's. Read from the settings files the agent
 * reads hooks from (user and project; Claude Code's local settings too); hooks it finds elsewhere
 * (a plugin's, managed settings) are not seen, and a rewrite by one is then uncertain, never the
 * agent's unseen.
 */
export function otherHooksBeside(event: HookEvent, projectDir: string): boolean {
  const spec = SPECS[event.agent];
  const files = [settingsFile(spec, "user", projectDir), settingsFile(spec, "project", projectDir)];
  if (event.agent === "claude-code") files.push(path.join(projectDir, ".claude", "settings.local.json"));
  return files.some(
    (file) =>
      file !== null &&
      settingsHandlers(settingsIn(file)).some(
        (h) =>
          h.event === event.name &&
          !isHookCommand(h.command, event.agent) &&
          (event.tool === undefined || runsFor(h.matcher, event.tool) === true),
      ),
  );
}
