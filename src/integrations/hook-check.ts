import { accessSync, constants, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { DoctorCheck } from "../maintenance/doctor.js";
import type { StoreContext } from "../store/context.js";
import type { DoctorProblem } from "../types.js";
import type { AgentName } from "./event.js";
import { type InstallSpec, isHookCommand, type Scope, SPECS } from "./specs.js";
import { target } from "./settings-file.js";
import { parseJsonc } from "./jsonc.js";
import { geminiSwitchesOff } from "./gemini-switches.js";

/** The PATH agents' shells often have: no Node version manager, no Homebrew. */
const BARE_PATH = ["/usr/bin", "/bin"];

/** Splits a command the way /bin/sh would for the quoting install writes; null when unbalanced. */
export function shellWords(command: string): string[] | null {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === "'" || c === '"') {
      const end = command.indexOf(c, i + 1);
      if (end < 0) return null;
      word += command.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === "\\") {
      word += command[++i] ?? "";
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Why a hook command would not run from `/bin/sh -c` with a bare PATH, or null when it would. */
export function whyNotRunnable(command: string): string | null {
  const words = shellWords(command);
  if (!words || words.length < 3) return "it cannot be parsed";
  const program = words[0];
  if (!program.includes("/")) {
    return BARE_PATH.some((dir) => executable(path.join(dir, program)))
      ? null
      : `\`${program}\` is not in /usr/bin or /bin, and agents often run hooks without your PATH`;
  }
  if (!executable(program)) return `${program} is gone or not executable`;
  const entry = words[1];
  if (entry !== "hook") {
    try {
      statSync(entry);
    } catch {
      return `${entry} is gone`;
    }
  }
  return null;
}

/** A command handler in a settings file: its event, command and the matcher it runs under. */
export interface SettingsHandler {
  event: string;
  command: string;
  /** The group's matcher (nested settings) or the handler's own (flat); none: every tool. */
  matcher?: string;
}

/** Every command handler of a settings file's `hooks`, nested (Claude Code's) or flat (Cursor's). */
export function settingsHandlers(settings: unknown): SettingsHandler[] {
  const hooks = (settings as { hooks?: unknown } | null)?.hooks;
  const found: SettingsHandler[] = [];
  if (typeof hooks !== "object" || hooks === null) return found;
  for (const [event, list] of Object.entries(hooks)) {
    const visit = (value: unknown, matcher: string | undefined): void => {
      if (Array.isArray(value)) for (const item of value) visit(item, matcher);
      else if (typeof value === "object" && value !== null) {
        const { command, matcher: own, hooks: inner } = value as Record<string, unknown>;
        const applies = typeof own === "string" ? own : matcher;
        if (typeof command === "string") found.push({ event, command, matcher: applies });
        visit(inner, applies);
      }
    };
    visit(list, undefined);
  }
  return found;
}

function ourHandlers(settings: unknown, agent: AgentName): SettingsHandler[] {
  return settingsHandlers(settings).filter((h) => isHookCommand(h.command, agent));
}

/** Our handler commands in a settings file, per event they are under. */
function handlerCommands(settings: unknown, agent: AgentName): Map<string, string[]> {
  const byEvent = new Map<string, string[]>();
  for (const { event, command } of ourHandlers(settings, agent)) {
    const commands = byEvent.get(event) ?? [];
    if (!commands.includes(command)) byEvent.set(event, [...commands, command]);
  }
  return byEvent;
}

/**
 * The events whose handlers of ours run for fewer tools than this release hooks (an older
 * release's matcher: Claude Code's PostToolUse before it took MCP tools), each with both matchers.
 * A matcher that runs for every tool this release names (reordered, wider, `*`) is not stale.
 */
function staleMatchers(spec: InstallSpec, settings: unknown): string[] {
  const ours = ourHandlers(settings, spec.agent);
  const stale: string[] = [];
  for (const [event, entry] of Object.entries(spec.entries(""))) {
    if (typeof entry.matcher !== "string") continue;
    const wanted = entry.matcher;
    const installed = ours.filter((h) => h.event === event);
    const tools = toolsNamedBy(wanted);
    // One this code cannot read is not called stale: the agent's own engine may run it for them all.
    const covers = (h: SettingsHandler) => tools.every((t) => runsFor(h.matcher, t) !== false);
    if (installed.length === 0 || installed.some(covers)) continue;
    const was = [...new Set(installed.map((h) => h.matcher))].join(", ");
    stale.push(`${event} runs for ${was}, not ${wanted}`);
  }
  return stale;
}

/** A tool name for each alternative of a matcher this release writes (`mcp__.*`: any MCP tool). */
function toolsNamedBy(matcher: string): string[] {
  const alternatives = matcher
    .replace(/^\^/, "")
    .replace(/\$$/, "")
    .replace(/^\((.*)\)$/, "$1");
  return alternatives.split("|").map((alternative) => alternative.replace(/\.\*/g, "server__tool"));
}

/**
 * Whether a matcher, as agents read it (a regular expression, whole-name; none, empty or `*`: every
 * tool), runs for `tool`; undefined when JavaScript cannot read it (an agent's engine may: Codex's
 * Rust regular expressions take more syntax). A leading `(?i)` makes it ignore case.
 */
export function runsFor(matcher: string | undefined, tool: string): boolean | undefined {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  const inline = /^\(\?([a-z]+)\)/.exec(matcher);
  const pattern = inline ? matcher.slice(inline[0].length) : matcher;
  try {
    return new RegExp(`^(?:${pattern})$`, inline?.[1].includes("i") ? "i" : "").test(tool);
  } catch {
    return undefined;
  }
}

/** ghostcommit's hook commands in an agent's settings file: none when it is absent or unreadable. */
export function ourCommandsIn(file: string, agent: AgentName): Set<string> {
  return new Set([...ourHandlersIn(file, agent).values()].flat());
}

/** The events of an agent's settings file that run a hook of ours, with its commands. */
export function ourHandlersIn(file: string, agent: AgentName): Map<string, string[]> {
  return handlerCommands(settingsIn(file), agent);
}

/** The parsed settings file, or null when it is absent, unreadable or not JSON (with comments). */
export function settingsIn(file: string): unknown {
  try {
    return parseJsonc(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Whether the agent runs both scopes' hooks of ours, handling each event twice (two turns, or two
 * snapshots per turn): every agent loads both files, and only some run identical handlers once.
 */
export function runsTwice(spec: InstallSpec, user: Set<string>, project: Set<string>): boolean {
  if (user.size === 0 || project.size === 0) return false;
  if (!spec.sameCommandOnce) return true;
  return [...user].some((c) => !project.has(c)) || [...project].some((c) => !user.has(c));
}

/** The settings file of `scope`, or null when it cannot be named (a relative CODEX_HOME). */
export function settingsFile(spec: InstallSpec, scope: Scope, projectDir: string): string | null {
  try {
    return spec.file(scope, projectDir);
  } catch {
    return null;
  }
}

/** Doctor check: a workspace whose agent has ghostcommit's hooks both in user and project settings. */
function installedTwice(spec: InstallSpec, root: string): DoctorProblem | null {
  const user = settingsFile(spec, "user", root);
  const project = settingsFile(spec, "project", root);
  if (!user || !project || target(user) === target(project)) return null;
  if (!runsTwice(spec, ourCommandsIn(user, spec.agent), ourCommandsIn(project, spec.agent))) return null;
  return {
    code: "hook-installed-twice",
    message: `ghostcommit's ${spec.label} hooks are in both ${user} and ${project}, so ${spec.label} runs each event's hook twice: keep one (\`ghostcommit uninstall ${spec.agent} --project\` or \`ghostcommit uninstall ${spec.agent}\`)`,
    path: project,
  };
}

/** Doctor check: every installed ghostcommit hook (user settings, and this workspace's) still runs. */
export const checkInstalledHooks: DoctorCheck = async (engine: StoreContext) => {
  const problems: DoctorProblem[] = [];
  let geminiInstalled = false;
  for (const spec of Object.values(SPECS)) {
    const twice = installedTwice(spec, engine.root);
    if (twice) problems.push(twice);
    for (const scope of ["user", "project"] as Scope[]) {
      const file = settingsFile(spec, scope, engine.root);
      if (file === null) continue; // install refuses that setting and says why
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue; // absent, or unreadable: no hook runs from it
      }
      let settings: unknown;
      try {
        settings = parseJsonc(text); // comments, as Gemini CLI allows them
      } catch {
        // Not ours to judge, unless it names us: the agent may fail to read it, or skip our hook.
        if (text.includes("ghostcommit")) {
          problems.push({
            code: "hook-command-broken",
            message: `cannot check the ${spec.label} hook in ${file}: the file is not valid JSON`,
            path: file,
          });
        }
        continue;
      }
      const installed = handlerCommands(settings, spec.agent);
      if (spec.agent === "gemini" && installed.size > 0) geminiInstalled = true;
      const again = `run \`ghostcommit install ${spec.agent}${scope === "project" ? " --project" : ""}\` again`;
      for (const command of new Set([...installed.values()].flat())) {
        const why = whyNotRunnable(command);
        if (!why) continue;
        problems.push({
          code: "hook-command-broken",
          message: `the ${spec.label} hook in ${file} cannot run (${why}); ${again}`,
          path: file,
        });
      }
      // Installed by an older release: an event added since (an end of turn) would leave turns
      // open; a matcher widened since (MCP tools) would leave those tools' edits unmarked.
      const missing = Object.keys(spec.entries("")).filter((event) => !installed.has(event));
      const lacks = missing.length > 0 ? [`lack ${missing.join(", ")}`] : [];
      const differ = installed.size > 0 ? staleMatchers(spec, settings) : [];
      if (differ.length > 0)
        lacks.push(`leave out tools this release hooks (${differ.join("; ")}), so their calls go unrecorded`);
      if (installed.size > 0 && lacks.length > 0) {
        problems.push({
          code: "hook-install-outdated",
          message: `the ${spec.label} hooks in ${file} ${lacks.join(", and ")}; ${again}`,
          path: file,
        });
      }
    }
  }
  // Installed, yet Gemini's own switches keep them from running: undo the user counts on is not there.
  if (geminiInstalled) {
    for (const message of geminiSwitchesOff(engine.root))
      problems.push({ code: "hook-switched-off", message });
  }
  return problems;
};
