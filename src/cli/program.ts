import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { GhostcommitError } from "../errors.js";
import * as diff from "./commands/diff.js";
import * as doctor from "./commands/doctor.js";
import * as drop from "./commands/drop.js";
import * as gc from "./commands/gc.js";
import * as list from "./commands/list.js";
import * as restore from "./commands/restore.js";
import * as show from "./commands/show.js";
import * as snapshot from "./commands/snapshot.js";
import { emit, emitError, IN_CHAT, runInChat } from "./output.js";
import { rememberRawArgs } from "./raw-args.js";
import type { Action } from "./runner.js";
import { markProcessShortLived } from "../util/detached.js";
import { trace } from "../util/trace.js";
import { type CommandModule, extraCommands } from "./registry.js";

const run: Action =
  (body) =>
  async (...args) => {
    const command = args[args.length - 1] as Command;
    try {
      const output = await body(command);
      emit(output, Boolean(command.optsWithGlobals().json));
    } catch (error) {
      process.exitCode = emitError(error, Boolean(command.optsWithGlobals().json));
    }
  };

/** Set to the package's version in the command-line bundle (scripts/bundle.mjs). */
declare const __ghostcommitVersion: string | undefined;

/**
 * The package version: written into the bundle when it is built, as reading and parsing
 * package.json took ~2 ms of every command on a slow machine (the command line is set up with
 * it). The compiled modules read package.json, which sits two levels above them.
 */
function version(): string {
  if (typeof __ghostcommitVersion === "string") return __ghostcommitVersion;
  for (const relative of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8")) as {
        name?: string;
        version: string;
      };
      if (pkg.name === "ghostcommit") return pkg.version;
    } catch {
      // try the next location
    }
  }
  return "unknown";
}

/** Every command, with the module that adds it. */
const COMMANDS: Record<string, CommandModule> = {
  snapshot,
  list,
  show,
  diff,
  restore,
  drop,
  gc,
  doctor,
  ...extraCommands,
};

/**
 * The command a command line names: its first word that is neither a global option nor an
 * option's value. Undefined for none (`--version`, `--help`) or a word that is no command.
 */
function commandNamed(program: Command, argv: string[]): string | undefined {
  const takesValue = new Set(
    program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.short, o.long]),
  );
  for (let i = 2; i < argv.length; i++) {
    if (takesValue.has(argv[i])) i++;
    else if (!argv[i].startsWith("-")) return Object.hasOwn(COMMANDS, argv[i]) ? argv[i] : undefined;
  }
  return undefined;
}

/**
 * The program for a command line (`argv` as in process.argv). Only the named command's module
 * is added (commander spends ~3 ms setting up all of them); without one, every command is, for
 * help and for commander's own errors and suggestions.
 */
export function buildProgram(argv: string[] = []): Command {
  const program = new Command("ghostcommit")
    .description("a full-workspace undo buffer for coding agents")
    .version(version())
    .option("-C <dir>", "workspace directory (default: current directory)")
    .option("--store <kind>", "where snapshots live: shadow or repo")
    .option("--json", "print one JSON document on stdout")
    // Taken off the line before commander parses it (see runCli): here for the help.
    .option("--in-chat", "for an agent's chat command: a failure goes to stdout and the exit status is 0")
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  const named = commandNamed(program, argv);
  for (const module of named ? [COMMANDS[named]] : new Set(Object.values(COMMANDS))) {
    module.register(program, run);
  }
  for (const command of program.commands) command.exitOverride().configureOutput({ outputError: () => {} });
  return program;
}

/** Where the help that answers a parse error is: the command's own, or the list of commands. */
function helpFor(named: string | undefined): string {
  return named === undefined
    ? "ghostcommit --help lists the commands"
    : `ghostcommit ${named} --help says how to call it`;
}

/** `turn begin` where the command named has subcommands and the line names one of them. */
function withSubcommand(program: Command, argv: string[], named: string): string {
  const command = program.commands.find((c) => c.name() === named);
  if (!command || command.commands.length === 0) return named;
  const names = new Set(command.commands.map((c) => c.name()));
  const sub = argv.slice(argv.indexOf(named) + 1).find((arg) => names.has(arg));
  return sub ? `${named} ${sub}` : named;
}

/** Commands that serve until stopped: work they leave to detached processes must start at once. */
const SERVERS = new Set(["mcp", "ui"]);

/**
 * Runs one command line (`argv` as in process.argv: node, script, then arguments) and returns
 * the exit status. Output goes to process.stdout and process.stderr.
 */
export async function runCli(argv: string[]): Promise<number> {
  trace("cli: loaded");
  if (argv.includes(IN_CHAT)) {
    runInChat();
    const line = argv.filter((arg) => arg !== IN_CHAT);
    // A chat command given no turn (`/ghostcommit-rewind` alone) ends its line in `--to`: said in
    // the chat's words, not as a command line's missing argument.
    const status =
      line.includes("rewind") && line.at(-1) === "--to"
        ? emitError(
            new GhostcommitError(
              "usage",
              "which turn? give the turn to go back to, as this session's log lists them (ghostcommit log)",
            ),
            false,
          )
        : await runCli(line);
    // With --json, stdout holds the one JSON document: a failure's error document says it.
    if (status !== 0 && !argv.includes("--json"))
      process.stdout.write(`(ghostcommit exited with status ${status})\n`);
    return 0;
  }
  rememberRawArgs(argv);
  const wantsJson = argv.includes("--json");
  const program = buildProgram(argv);
  // With --json, stdout holds one JSON document: commander's help and version text go into it.
  let shown = "";
  if (wantsJson) redirectOutput(program, (text) => (shown += text));
  const named = commandNamed(program, argv);
  if (named !== undefined && !SERVERS.has(named)) markProcessShortLived();
  if (argv.length <= 2) {
    process.stderr.write(program.helpInformation());
    return emitError(
      new GhostcommitError("usage", "a command is needed (ghostcommit --help lists them)"),
      wantsJson,
    );
  }
  process.exitCode = undefined;
  try {
    await program.parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) {
        // --help, --version
        if (wantsJson)
          process.stdout.write(
            `${JSON.stringify(error.code === "commander.version" ? { version: version() } : { help: shown }, null, 2)}\n`,
          );
        return 0;
      }
      // A command with subcommands given none (`turn`, or options alone): commander has printed
      // its usage, and its message is a placeholder.
      const valued = error.code === "commander.unknownOption" ? flagGivenValue(program, error) : null;
      const misplaced =
        error.code === "commander.unknownOption" && !valued ? optionOfCommand(program, argv, error) : null;
      const message =
        error.code === "commander.help"
          ? neededCommand(program, argv, named)
          : valued
            ? `${valued} takes no value (${helpFor(named && withSubcommand(program, argv, named))})`
            : misplaced
              ? `${misplaced.flag} is an option of \`${misplaced.command}\`, so it goes after the command: ghostcommit ${misplaced.command} ${misplaced.flag} …`
              : // One line: commander puts its "(Did you mean --session?)" on a line of its own.
                `${error.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ")} (${helpFor(named && withSubcommand(program, argv, named))})`;
      return emitError(new GhostcommitError("usage", message), wantsJson);
    }
    return emitError(error, wantsJson);
  }
}

/** Sends commander's own output (help, version) of `command` and its subcommands to `write`. */
function redirectOutput(command: Command, write: (text: string) => void): void {
  command.configureOutput({ writeOut: write });
  for (const sub of command.commands) redirectOutput(sub, write);
}

/** Why a line names no command to run: none at all, none after one that has subcommands, or an unknown one after `help`. */
function neededCommand(program: Command, argv: string[], named: string | undefined): string {
  const args = argv.slice(2).filter((arg) => !arg.startsWith("-"));
  if (named === "help" || (named === undefined && args[0] === "help")) {
    const asked = args[args.indexOf("help") + 1];
    if (asked !== undefined && !program.commands.some((c) => c.name() === asked))
      return `unknown command '${asked}' (ghostcommit --help lists the commands)`;
  }
  const parent = named !== undefined ? program.commands.find((c) => c.name() === named) : undefined;
  if (parent && parent.commands.length > 0)
    return `\`${named}\` needs one of its commands (ghostcommit ${named} --help lists them)`;
  return "a command is needed (ghostcommit --help lists them)";
}

/** A flag that takes no value given one (`--json=1`): its name, where some command has it so. */
function flagGivenValue(program: Command, error: CommanderError): string | null {
  const given = /'(--[^'=]+)=/.exec(error.message)?.[1];
  if (!given) return null;
  const flags = (c: Command): boolean =>
    c.options.some((o) => o.long === given && !o.required && !o.optional) || c.commands.some(flags);
  return flags(program) ? given : null;
}

/**
 * An option given before the command it belongs to (`ghostcommit --agent claude-code log`), which
 * commander takes for an unknown global option: the command named later on the line, and the flag.
 */
function optionOfCommand(
  program: Command,
  argv: string[],
  error: CommanderError,
): { flag: string; command: string } | null {
  const flag = /'(-[^'=]+)/.exec(error.message)?.[1];
  if (!flag) return null;
  for (const arg of argv.slice(2)) {
    const command = program.commands.find((c) => c.name() === arg);
    if (!command) continue;
    const own = (c: Command): boolean =>
      c.options.some((o) => o.long === flag || o.short === flag) || c.commands.some(own);
    return own(command) ? { flag, command: arg } : null;
  }
  return null;
}
