import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { AgentName } from "./event.js";
import { type InstallSpec, isHookCommand, type Scope } from "./specs.js";
import { target } from "./settings-file.js";
import { parseJsonc } from "./jsonc.js";
import { shellWord } from "../util/shell.js";

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
export function handlerCommands(settings: unknown, agent: AgentName): Map<string, string[]> {
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
export function staleMatchers(spec: InstallSpec, settings: unknown): string[] {
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

/**
 * The settings files an agent started in `dir` loads, with their scope: the user's, the project's
 * at `dir` and, for an agent that loads layers (`projectLayers`), those of the directories above
 * up to the repository's top (none outside a repository: its project is the directory itself).
 */
export function loadedSettingsFiles(spec: InstallSpec, dir: string): { scope: Scope; file: string }[] {
  const files: { scope: Scope; file: string }[] = [];
  const user = settingsFile(spec, "user", dir);
  if (user) files.push({ scope: "user", file: user });
  const project = settingsFile(spec, "project", dir);
  if (project) files.push({ scope: "project", file: project });
  if (!spec.projectLayers) return files;
  const above: string[] = [];
  for (let at = path.resolve(dir); ; ) {
    if (existsSync(path.join(at, ".git"))) {
      for (const layer of above) {
        const file = settingsFile(spec, "project", layer);
        if (file && existsSync(file)) files.push({ scope: "project", file });
      }
      break;
    }
    const parent = path.dirname(at);
    if (parent === at) break;
    above.push(parent);
    at = parent;
  }
  return files;
}

/** Of the files `loadedSettingsFiles` names, the distinct ones holding our hooks. */
export function filesWithOurHooks(
  spec: InstallSpec,
  dir: string,
): { scope: Scope; file: string; commands: Set<string> }[] {
  const seen = new Set<string>();
  const found: { scope: Scope; file: string; commands: Set<string> }[] = [];
  for (const { scope, file } of loadedSettingsFiles(spec, dir)) {
    const real = target(file);
    if (seen.has(real)) continue;
    seen.add(real);
    const commands = ourCommandsIn(file, spec.agent);
    if (commands.size > 0) found.push({ scope, file, commands });
  }
  return found;
}

/**
 * The command that removes ghostcommit's hooks from `file` (of `scope`), run from `here`: a
 * project file of another directory (a layer above, for Codex) is named by its directory.
 */
export function uninstallCommand(agent: AgentName, scope: Scope, file: string, here: string): string {
  if (scope === "user") return `ghostcommit uninstall ${agent}`;
  const dir = path.dirname(path.dirname(file));
  return `ghostcommit ${dir === path.resolve(here) ? "" : `-C ${shellWord(dir)} `}uninstall ${agent} --project`;
}
