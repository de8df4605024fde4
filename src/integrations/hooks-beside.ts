import path from "node:path";
import { runsFor, settingsFile, settingsHandlers, settingsIn } from "./hook-check.js";
import type { AgentName, HookEvent } from "./event.js";
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
  return otherHandlers(event.agent, projectDir).some(
    (h) => h.event === event.name && (event.tool === undefined || runsFor(h.matcher, event.tool) === true),
  );
}

/** The hooks not ghostcommit's in the settings files the agent reads them from (see otherHooksBeside). */
function otherHandlers(agent: AgentName, projectDir: string) {
  const spec = SPECS[agent];
  const files = [settingsFile(spec, "user", projectDir), settingsFile(spec, "project", projectDir)];
  if (agent === "claude-code") files.push(path.join(projectDir, ".claude", "settings.local.json"));
  return files.flatMap((file) =>
    file === null ? [] : settingsHandlers(settingsIn(file)).filter((h) => !isHookCommand(h.command, agent)),
  );
}

/** The event each agent runs a hook on after its file edits (where a formatter is run). */
const AFTER_EDIT: Record<AgentName, string> = {
  "claude-code": "PostToolUse",
  codex: "PostToolUse",
  cursor: "afterFileEdit",
  gemini: "AfterTool",
};

/** The tools that event is sent for when they edit a file (Cursor's afterFileEdit has no matcher). */
const EDIT_TOOLS: Record<AgentName, string[]> = {
  "claude-code": ["Write", "Edit", "MultiEdit", "NotebookEdit"],
  codex: ["apply_patch"],
  cursor: [],
  gemini: ["write_file", "replace"],
};

/** Whether a hook of the after-edit event runs after an edit tool (one whose matcher no engine here reads: maybe). */
function runsAfterEdits(agent: AgentName, matcher: string | undefined): boolean {
  const tools = EDIT_TOOLS[agent];
  return tools.length === 0 || tools.some((tool) => runsFor(matcher, tool) !== false);
}

/**
 * Said at install: the other hooks run after the agent's edits, whose rewrites in the seconds
 * after an edit count as the edit's, so a person's save in that window does too (null: none).
 */
export function hooksBesideEditsNote(agent: AgentName, projectDir: string): string | null {
  const commands = [
    ...new Set(
      otherHandlers(agent, projectDir).flatMap((h) =>
        h.event === AFTER_EDIT[agent] && runsAfterEdits(agent, h.matcher) ? [h.command] : [],
      ),
    ),
  ];
  if (commands.length === 0) return null;
  const shown = commands.slice(0, 2).map((c) => `\`${c.length > 60 ? `${c.slice(0, 57)}…` : c}\``);
  return `Other ${AFTER_EDIT[agent]} hooks run after the agent's edits (${shown.join(", ")}${commands.length > 2 ? ", …" : ""}): a file an edit wrote that changes again within 10 s, before the agent's next tool call, counts as the edit's (a formatter's rewrite), so a save of yours to it in those seconds is rewound with the turn.`;
}
