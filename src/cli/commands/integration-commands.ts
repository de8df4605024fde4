import { realpathSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { GhostcommitError } from "../../errors.js";
import { currentDirectory } from "../../paths.js";
import type { AgentName } from "../../integrations/event.js";
import { AGENTS } from "../../integrations/event.js";
import {
  brokenCommands,
  type CommandFiles,
  cliOf,
  installCommands,
  uninstallCommands,
} from "../../integrations/claude-commands.js";
import { codexHookSwitches } from "../../integrations/codex-switches.js";
import { geminiSwitchesOff } from "../../integrations/gemini-switches.js";
import { hooksBesideEditsNote } from "../../integrations/hooks-beside.js";
import { install, uninstall } from "../../integrations/install.js";
import { hookCommand, type Scope, SPECS } from "../../integrations/specs.js";
import { filesWithOurHooks, runsTwice, uninstallCommand } from "../../integrations/hook-check.js";
import { target } from "../../integrations/settings-file.js";
import { type GlobalOptions, globalsOf, withGlobals } from "../context.js";
import { runHookCommand } from "../hook-entry.js";
import { color } from "../output.js";
import type { Action } from "../runner.js";

const NO_FILES: CommandFiles = { done: [], keptEdited: [], keptUsers: [] };

function slashNames(files: string[]): string {
  return files.map((file) => `/${path.basename(file, ".md")}`).join(", ");
}

function keptLines(
  edited: string[],
  users: string[] = [],
  broken: { file: string; why: string }[] = [],
): string[] {
  return [
    ...edited.map((file) => {
      const why = broken.find((b) => b.file === file)?.why;
      const cannot = why ? `, and it cannot run (${why})` : "";
      return color.yellow(
        `kept ${file} as you edited it${cannot} (remove it and run install again for ghostcommit's)`,
      );
    }),
    ...users.map((file) =>
      color.yellow(
        `left ${file} as it was: it is your own command, so /${path.basename(file, ".md")} is not ghostcommit's (rename yours and run install again for it)`,
      ),
    ),
  ];
}

/**
 * Ours also in another file the agent loads (the other scope's settings, a project layer above
 * for Codex): it would handle each event twice.
 */
function otherScopeWarning(agent: AgentName, scope: Scope, dir: string, file: string, hook: string) {
  const spec = SPECS[agent];
  for (const other of filesWithOurHooks(spec, dir)) {
    if (target(other.file) === file || !runsTwice(spec, new Set([hook]), other.commands)) continue;
    const layer = other.scope === "project" && scope === "project";
    const remove = `\`${uninstallCommand(agent, other.scope, other.file, dir)}\``;
    const what = layer
      ? "the project settings of a directory above, which it loads too"
      : `${other.scope} settings`;
    return {
      scope: other.scope,
      file: other.file,
      message: `ghostcommit's ${spec.label} hooks are also in ${other.file} (${what}), so ${spec.label} runs each event's hook twice: keep one (${remove} removes those)`,
    };
  }
  return null;
}

/** Integration commands: hook, install, uninstall, mcp. */
export function register(program: Command, run: Action): void {
  withGlobals(program.command("hook"))
    .description(`handle one agent hook event from stdin (${AGENTS.join(", ")}); always exits 0`)
    .argument("[agent]", "the agent whose hook runs this")
    // A hook must never fail on its command line: an exit status 2 would block the user's prompt.
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (agent: string | undefined, _options: unknown, command: Command) => {
      await runHookCommand(agent, () => globalsOf(command), (command.optsWithGlobals() as GlobalOptions).C);
    });

  for (const verb of ["install", "uninstall"] as const) {
    withGlobals(program.command(verb))
      .description(
        verb === "install"
          ? "add ghostcommit's hooks to an agent's settings (default: --user)"
          : "remove exactly the hooks install added",
      )
      .argument("<agent>", AGENTS.join(" | "))
      .option("--project", "the workspace's settings file (-C or the current directory)")
      .option("--user", "your user settings file, for every project (default)")
      .action(
        run(async (command) => {
          const globals = globalsOf(command);
          const options = command.opts() as { project?: boolean; user?: boolean };
          if (options.project && options.user)
            throw new GhostcommitError("usage", "choose --project or --user");
          const agent = agentOf(command.args[0]);
          const scope: Scope = options.project ? "project" : "user";
          const dir = path.resolve(globals.C ?? currentDirectory());
          const spec = SPECS[agent];
          if (verb === "uninstall") {
            // Command files once the settings can change (a refusal changes nothing), and before:
            // removing the settings may remove the directory they are in.
            let files = NO_FILES;
            const removed = await uninstall(spec, scope, dir, async () => {
              if (agent === "claude-code") files = await uninstallCommands(scope, dir);
            });
            const report = {
              ...removed,
              changed: removed.changed || files.done.length > 0,
              commands: files.done,
              commandsKept: files.keptEdited,
            };
            const what = report.deleted
              ? `removed ${report.file} (install had created it)`
              : removed.changed
                ? `removed ghostcommit's ${spec.label} hooks from ${report.file}`
                : `no ghostcommit hooks in ${report.file}${report.changed ? "" : "; nothing changed"}`;
            return {
              json: report,
              human: () =>
                [
                  what,
                  ...(files.done.length > 0 ? [`removed slash commands: ${slashNames(files.done)}`] : []),
                  ...keptLines(files.keptEdited),
                ].join("\n"),
            };
          }
          const entry = realpathSync(process.argv[1]);
          const hook = hookCommand(agent, process.execPath, entry);
          const installed = await install(spec, scope, dir, hook);
          const files = agent === "claude-code" ? await installCommands(scope, dir, cliOf(hook)) : NO_FILES;
          const broken = files.keptEdited.length > 0 ? await brokenCommands(scope, dir) : [];
          const twice = otherScopeWarning(agent, scope, dir, installed.file, hook);
          const report = {
            ...installed,
            commands: files.done,
            commandsKept: files.keptEdited,
            commandsLeftAsTheyWere: files.keptUsers,
            alsoInstalledIn: twice && { scope: twice.scope, file: twice.file },
          };
          const warnings = entry.split(path.sep).includes("_npx")
            ? [
                `the hooks run ${entry} from npx's cache, which npm may clear: install ghostcommit (npm i -g ghostcommit) and run install again.`,
              ]
            : [];
          if (agent === "gemini") warnings.push(...geminiSwitchesOff(dir));
          const codexSwitches = agent === "codex" ? codexHookSwitches(dir) : null;
          if (codexSwitches) warnings.push(...codexSwitches.off);
          // Older builds' note: not for a config that switches hooks on, or off (said above).
          const shownNotes = spec.notes.filter(
            (note) =>
              !(
                codexSwitches &&
                (codexSwitches.on || codexSwitches.off.length > 0) &&
                note.includes("codex_hooks")
              ),
          );
          const beside = hooksBesideEditsNote(agent, dir);
          if (twice) warnings.push(twice.message);
          // A project's settings file is often committed, and the command holds this machine's paths.
          const notes =
            scope === "project"
              ? [
                  ...shownNotes,
                  ...(spec.projectNotes ?? []),
                  `The hooks${agent === "claude-code" ? " and slash commands" : ""} name Node and ghostcommit where they are on this machine (${process.execPath}, ${entry}): a teammate who gets ${report.file} through git needs them at the same paths, or their agent reports the hook failing. Each of you can instead run \`ghostcommit install ${agent}\` (your user's settings, every project) and leave this file out of git.`,
                ]
              : [...shownNotes];
          if (beside) notes.push(beside);
          return {
            // The terminal says it on the kept file's line; JSON readers get it as a warning.
            json: {
              ...report,
              notes,
              warnings: [
                ...warnings,
                ...broken.map((b) => `kept ${b.file} as you edited it, but it cannot run (${b.why})`),
              ],
            },
            human: () =>
              [
                report.changed
                  ? `${color.green("installed")} ${spec.label} hooks (${report.events.join(", ")}) in ${report.file}`
                  : `${spec.label} hooks already installed in ${report.file}; nothing changed`,
                ...(files.done.length > 0 ? [`slash commands: ${slashNames(files.done)}`] : []),
                ...keptLines(files.keptEdited, files.keptUsers, broken),
                ...notes.map((n) => color.dim(n)),
                ...warnings.map((w) => color.yellow(w)),
              ].join("\n"),
          };
        }),
      );
  }

  withGlobals(program.command("mcp"))
    .description(
      "serve the Model Context Protocol on stdio (tools: snapshot, list_snapshots, diff, restore, sessions, log, rewind, redo, push, fetch)",
    )
    .action(async (_options: unknown, command: Command) => {
      const globals = globalsOf(command);
      // Loaded here so hooks never pay for the MCP SDK.
      const { serveMcp } = await import("../../integrations/mcp.js");
      await serveMcp({
        dir: path.resolve(globals.C ?? currentDirectory()),
        store: globals.store,
        version: program.version() ?? "0.0.0",
      });
    });
}

function agentOf(name: string): AgentName {
  const agent = AGENTS.find((a) => a === name);
  if (!agent)
    throw new GhostcommitError("usage", `unknown agent "${name}" (use one of ${AGENTS.join(", ")})`);
  return agent;
}
