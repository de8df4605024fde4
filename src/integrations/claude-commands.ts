import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { writeFileAtomic } from "../store/layout.js";
import { sha256Hex } from "../util/sha256.js";
import type { Scope } from "./specs.js";
import { whyNotRunnable } from "./hook-check.js";

/**
 * A line in the front matter of every command file ghostcommit writes, ending with the digest of
 * the rest of the file: install rewrites and uninstall removes only files that carry it unedited.
 * A file the user edited (its digest no longer matches) is theirs now and stays as it is.
 */
const MARK =
  "# written by `ghostcommit install claude-code`; `ghostcommit uninstall claude-code` removes it unless edited";
/** Files written before they carried a digest end the line at "removes it": taken as unedited. */
const MARK_START = "# written by `ghostcommit install claude-code`;";
const STAMP = / \(sha256 ([0-9a-f]{16})\)$/;

function digestOf(text: string): string {
  const rest = text.split("\n").filter((line) => !line.startsWith(MARK_START));
  return sha256Hex(rest.join("\n")).slice(0, 16);
}

type Owner = "nobody" | "user" | "ghostcommit" | "edited";

/** Whose the file holding `existing` (null: no file) is. */
function ownerOf(existing: string | null): Owner {
  if (existing === null) return "nobody";
  const mark = existing.split("\n").find((line) => line.startsWith(MARK_START));
  if (mark === undefined) return "user";
  const stamp = STAMP.exec(mark);
  if (!stamp) return "ghostcommit";
  return stamp[1] === digestOf(existing) ? "ghostcommit" : "edited";
}

/**
 * Claude Code custom slash commands: `/ghostcommit-log`, `/ghostcommit-rewind <turn>`,
 * `/ghostcommit-redo`. Each runs the CLI (`!` lines run before the prompt reaches the model) and
 * asks the model to report the result and re-read what went back. The command's own prompt may
 * already have opened a turn, so rewind keeps that turn open instead of refusing, and redo still
 * undoes the rewind that turn's beginning would have put out of reach.
 *
 * Each names the session it is typed in: Claude Code (2.1.9 and later) puts the session's id in
 * place of `${CLAUDE_SESSION_ID}` before the `!` line runs, as it does `$ARGUMENTS`. Without it,
 * the "most recently active" session could be another conversation's, still working in the same
 * workspace. An older Claude Code leaves the token to the shell, which makes it empty, and an
 * empty `--session=` means that default. `--agent claude-code` acts in the workspace the hooks keep
 * the session in: the line runs in the directory the agent last `cd`-ed to, which may be a
 * subdirectory, a workspace of its own. `--in-chat`: Claude Code shows a `!` line's output only
 * when it exits 0 ("Bash command failed for pattern" otherwise), so a refusal is printed on
 * stdout with status 0, for the model to read and say.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own token, written as is
const THIS_SESSION = "--agent claude-code --session=${CLAUDE_SESSION_ID} --in-chat";

function commandFiles(cli: string): Record<string, string> {
  const file = (description: string, hint: string | null, run: string, ask: string) => {
    const text = [
      "---",
      MARK,
      // Quoted: a plain YAML value may not hold ": " (the log's description does), and a strict
      // front-matter parser refuses the whole file for it. JSON's quoting is YAML's.
      `description: ${JSON.stringify(description)}`,
      ...(hint ? [`argument-hint: ${JSON.stringify(hint)}`] : []),
      `allowed-tools: Bash(${run.split(" --")[0]}:*)`,
      "---",
      "",
      `!\`${run}\``,
      "",
      ask,
      "",
    ].join("\n");
    return text.replace(MARK, `${MARK} (sha256 ${digestOf(text)})`);
  };
  return {
    "ghostcommit-log.md": file(
      "List this session's turns (ghostcommit): pick one for /ghostcommit-rewind",
      null,
      `${cli} log ${THIS_SESSION}`,
      "Above is ghostcommit's list of this session's turns. Show it to the user briefly (turn, prompt, files changed) and change no file.",
    ),
    "ghostcommit-rewind.md": file(
      "Put files back as they were before turn N of this session (ghostcommit rewind)",
      "<turn>",
      `${cli} rewind ${THIS_SESSION} --keep-open-turn --to $ARGUMENTS`,
      "Above is ghostcommit's report of the rewind. Tell the user in a sentence or two which turns and files went back, or why it refused (a refusal changed nothing). Re-read those files before editing them again, and do not redo the undone work unless asked. /ghostcommit-redo undoes the rewind.",
    ),
    "ghostcommit-redo.md": file(
      "Undo the last ghostcommit rewind of this session",
      null,
      `${cli} redo ${THIS_SESSION} --keep-open-turn`,
      "Above is ghostcommit's report of the redo. Tell the user in a sentence which turns and files came back, or why it refused. Re-read those files before editing them again.",
    ),
  };
}

function commandsDir(scope: Scope, projectDir: string): string {
  return scope === "user"
    ? path.join(os.homedir(), ".claude", "commands")
    : path.join(projectDir, ".claude", "commands");
}

/** The CLI as the installed hook command runs it: the hook command without its `hook <agent>` tail. */
export function cliOf(hookCommand: string): string {
  return hookCommand.replace(/ hook claude-code$/, "");
}

export interface CommandFiles {
  /** Written, removed, or already as install writes them. */
  done: string[];
  /** Files install wrote that the user has edited since: left as they are. */
  keptEdited: string[];
  /** The user's own files of a command's name (install did not write them): left as they are. */
  keptUsers: string[];
}

/** Writes the command files (rewriting ours, never a file of the user's, nor one they edited). */
export async function installCommands(scope: Scope, projectDir: string, cli: string): Promise<CommandFiles> {
  const dir = commandsDir(scope, projectDir);
  await fs.mkdir(dir, { recursive: true });
  const result: CommandFiles = { done: [], keptEdited: [], keptUsers: [] };
  for (const [name, text] of Object.entries(commandFiles(cli))) {
    const file = path.join(dir, name);
    const existing = await fs.readFile(file, "utf8").catch(() => null);
    const owner = ownerOf(existing);
    if (owner === "user") {
      result.keptUsers.push(file); // the user's own command of that name
      continue;
    }
    if (owner === "edited") {
      result.keptEdited.push(file);
      continue;
    }
    // Readable like the project's other files (they may be committed with it).
    if (existing !== text) await writeFileAtomic(file, text, 0o644);
    result.done.push(file);
  }
  return result;
}

/** Removes the command files install wrote and nobody edited (and the directory, if left empty). */
export async function uninstallCommands(scope: Scope, projectDir: string): Promise<CommandFiles> {
  const dir = commandsDir(scope, projectDir);
  const result: CommandFiles = { done: [], keptEdited: [], keptUsers: [] };
  for (const name of Object.keys(commandFiles(""))) {
    const file = path.join(dir, name);
    const owner = ownerOf(await fs.readFile(file, "utf8").catch(() => null));
    if (owner === "edited") result.keptEdited.push(file);
    if (owner !== "ghostcommit") continue;
    await fs.rm(file, { force: true });
    result.done.push(file);
  }
  if (result.done.length > 0) await fs.rmdir(dir).catch(() => {}); // fails, as it should, when not empty
  return result;
}

/**
 * Of the command files install wrote (edited since or not), those whose command cannot run (Node
 * moved, the package removed): Claude Code shows a `!` line's output only when it exits 0, so the
 * slash command then shows nothing at all.
 */
export async function brokenCommands(
  scope: Scope,
  projectDir: string,
): Promise<{ file: string; why: string }[]> {
  const broken: { file: string; why: string }[] = [];
  for (const name of Object.keys(commandFiles(""))) {
    const file = path.join(commandsDir(scope, projectDir), name);
    const text = await fs.readFile(file, "utf8").catch(() => null);
    const owner = ownerOf(text);
    if (text === null || owner === "user" || owner === "nobody") continue;
    const run = /^!`(.*)`$/m.exec(text)?.[1];
    const why = run === undefined ? "it runs no command" : whyNotRunnable(run);
    if (why) broken.push({ file, why });
  }
  return broken;
}
