import { whereJsonFails } from "../util/json-error.js";
import { constants as fsConstants, promises as fs, readlinkSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { writeFileAtomic } from "../store/layout.js";
import { type JsonNode, parseJsoncTree } from "./jsonc.js";

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
  /** The file's text as read: install and uninstall edit it, keeping every byte they do not own. */
  text: string;
  /** The text parsed, with positions: for a blank file (only whitespace), an empty object's. */
  tree: JsonNode;
  value: Json;
  /** The file holds only whitespace (or nothing): given back as it was once nothing is left. */
  blank: boolean;
  /** Mode, owner and link count of the file as found (it may hold API keys). */
  stat: { mode: number; uid: number; gid: number; nlink: number };
}

/**
 * Reads a settings file; null when absent. Refuses anything that is not a JSON object; comments
 * and trailing commas only for an agent that reads them (`comments`).
 */
export async function load(file: string, comments = false): Promise<Loaded | null> {
  let text: string;
  let stat: Stats;
  try {
    text = await fs.readFile(file, "utf8");
    stat = await fs.stat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new GhostcommitError("io", `cannot read ${file}: ${(error as Error).message}`, { path: file });
  }
  const blank = text.trim() === "";
  let tree: JsonNode | undefined;
  try {
    if (!blank && !comments) JSON.parse(text); // what the agent accepts, before positions
    tree = parseJsoncTree(blank ? "{}" : text);
  } catch (error) {
    throw new GhostcommitError(
      "bad-config",
      `${file} is not valid JSON${whereJsonFails(text, error)}; fix it first, nothing was changed`,
      {
        file,
      },
    );
  }
  const value = tree.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GhostcommitError("bad-config", `${file} does not hold a JSON object; nothing was changed`, {
      file,
    });
  }
  return {
    text,
    tree,
    value: value as Json,
    blank,
    stat: { mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid, nlink: stat.nlink },
  };
}

/**
 * Refuses to change a file whose mode has no write bit: its owner made it read-only to protect
 * it, and a rename would replace it all the same.
 */
export function refuseRewrite(file: string, loaded: Loaded): void {
  if ((loaded.stat.mode & 0o222) === 0)
    throw new GhostcommitError("io", `${file} is read-only; nothing was changed`, {
      path: file,
      errno: "EACCES",
    });
}

/** Writes a settings file's new text, keeping a rewritten file's mode, owner and hard links. */
export async function save(file: string, text: string, found?: Loaded["stat"]): Promise<void> {
  if (found && found.nlink > 1) return writeThroughLinks(file, text);
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

/** The copy of a hard-linked settings file kept while it is rewritten in place. */
export function backupOf(file: string): string {
  return `${file}.ghostcommit-backup`;
}

/**
 * A file with other hard links (a dotfile link farm) is rewritten in place, which every link sees:
 * a rename would give this name a new file and leave the others with the old text. In place is not
 * atomic, so the old text is first written beside it and synced, then the file is rewritten and
 * synced, then the copy removed. A crash at any point leaves either the file whole, or the copy
 * whole beside it; a copy left over stops the next write until the user has looked at it, so
 * nothing is lost.
 */
async function writeThroughLinks(file: string, text: string): Promise<void> {
  const backup = backupOf(file);
  if (
    await fs.lstat(backup).then(
      () => true,
      () => false,
    )
  )
    throw new GhostcommitError(
      "io",
      `${backup} is left from an interrupted write of ${file}: compare the two, keep what is right in ${file}, remove the copy and run again; nothing was changed`,
      { path: backup },
    );
  await fs.copyFile(file, backup, fsConstants.COPYFILE_EXCL);
  await syncFile(backup);
  await syncFile(path.dirname(backup)); // the copy's name too
  try {
    const handle = await fs.open(file, "r+");
    try {
      const bytes = Buffer.from(text, "utf8");
      await handle.write(bytes, 0, bytes.length, 0);
      await handle.truncate(bytes.length);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new GhostcommitError(
      "io",
      `cannot write ${file}: ${(error as Error).message}; its text as it was is in ${backup}`,
      { path: file, errno: (error as NodeJS.ErrnoException).code },
    );
  }
  await fs.rm(backup);
}

async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
