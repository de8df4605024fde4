import { promises as fs, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { writeFileAtomic } from "../store/layout.js";
import { parseJsonc } from "./jsonc.js";

/** An agent's settings file: a JSON object. */
export type Json = Record<string, unknown>;

/**
 * The file to write: a symlinked settings file (dotfile managers) is written through, not
 * replaced, also when the link names a file that does not exist yet (install creates it there).
 */
export function target(file: string): string {
  let current = file;
  for (let hops = 0; hops < 40; hops++) {
    try {
      return realpathSync(current);
    } catch {
      const link = readlinkOrNull(current);
      if (link === null) return current; // no file and no link: it is created here
      current = path.resolve(path.dirname(current), link);
    }
  }
  return file;
}

function readlinkOrNull(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}

export interface Loaded {
  value: Json;
  indent: string | number;
  /** The file's line ending, and whether it ends with one: kept when it is rewritten. */
  eol?: "\n" | "\r\n";
  finalNewline?: boolean;
  /** Mode and owner of the file as found, kept when it is rewritten (it may hold API keys). */
  stat?: { mode: number; uid: number; gid: number };
  /** Why the file must not be rewritten (it has comments), though it could be read. */
  keep?: string;
}

/**
 * Reads a settings file; null when absent. Refuses anything that is not a JSON object. `byHand`,
 * for an agent that reads comments and trailing commas: what to do about a file that has them.
 * Such a file is read, so that a command with nothing to change there succeeds; only a rewrite
 * (`refuseRewrite`) is refused.
 */
export async function load(file: string, byHand?: string): Promise<Loaded | null> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new GhostcommitError("io", `cannot read ${file}: ${(error as Error).message}`, { path: file });
  }
  let value: unknown;
  let keep: string | undefined;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    value = byHand === undefined ? undefined : jsoncOrUndefined(text);
    if (value === undefined)
      throw new GhostcommitError(
        "bad-config",
        `${file} is not valid JSON${bomNote(text)}; fix it first, nothing was changed`,
        { file },
      );
    keep = `${file} has comments or trailing commas, which ghostcommit does not rewrite (they would be lost); nothing was changed. ${byHand}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GhostcommitError("bad-config", `${file} does not hold a JSON object; nothing was changed`, {
      file,
    });
  }
  const stat = await fs.stat(file).catch(() => undefined);
  return {
    value: value as Json,
    indent: indentOf(text, value as Json),
    eol: text.includes("\r\n") ? "\r\n" : "\n",
    finalNewline: text.trim() === "" || /\n$/.test(text),
    stat: stat && { mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid },
    ...(keep === undefined ? {} : { keep }),
  };
}

/**
 * The file's indentation; none for a file that holds its settings on one line (as a tool or an
 * `echo` wrote it), which stays one line, so that uninstall gives it back byte for byte.
 */
function indentOf(text: string, value: Json): string | number {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1];
  if (indent !== undefined) return indent;
  return Object.keys(value).length > 0 && !text.trim().includes("\n") ? 0 : 2;
}

function jsoncOrUndefined(text: string): unknown {
  try {
    return parseJsonc(text);
  } catch {
    return undefined;
  }
}

/**
 * Refuses to change a file with comments (see `load`), or one whose mode has no write bit: its
 * owner made it read-only to protect it, and a rename would replace it all the same.
 */
export function refuseRewrite(file: string, loaded: Loaded): void {
  if (loaded.keep !== undefined) throw new GhostcommitError("bad-config", loaded.keep, { file });
  if (loaded.stat && (loaded.stat.mode & 0o222) === 0)
    throw new GhostcommitError("io", `${file} is read-only; nothing was changed`, {
      path: file,
      errno: "EACCES",
    });
}

/** Writes a settings file back as it was laid out, keeping a rewritten file's mode and owner. */
export async function save(file: string, loaded: Loaded): Promise<void> {
  const eol = loaded.eol ?? "\n";
  const json = JSON.stringify(loaded.value, null, loaded.indent).replace(/\n/g, eol); // no raw newline inside strings
  const text = loaded.finalNewline === false ? json : `${json}${eol}`;
  const found = loaded.stat;
  // A new file gets the usual mode (umask applies); a rewritten one keeps its mode and owner.
  await writeFileAtomic(file, text, found ? found.mode : 0o666);
  if (!found) return;
  await fs.chmod(file, found.mode);
  const now = await fs.stat(file);
  if (now.uid !== found.uid || now.gid !== found.gid) {
    await fs.chown(file, found.uid, found.gid).catch((error: Error) => {
      throw new GhostcommitError("io", `cannot keep the owner of ${file}: ${error.message}`, { path: file });
    });
  }
}

/** Why a file that looks like JSON is not: a byte order mark, which no editor shows. */
function bomNote(text: string): string {
  return text.startsWith("\uFEFF")
    ? " (it starts with a byte order mark, U+FEFF, which JSON does not allow and most editors do not show: save it as UTF-8 without one)"
    : "";
}
