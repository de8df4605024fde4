import { promises as fs, mkdirSync, statSync } from "node:fs";
import path from "node:path";

/**
 * `mkdir -p` that always ends. Node's recursive mkdir tries a directory again whenever its mkdir
 * fails with ENOENT and the parent then exists, so on a file system that answers ENOENT for a
 * directory it will not make under an existing one (/proc) it looped forever at full CPU. Here
 * each directory is tried at most twice: before and after its parent is made. Returns the first
 * directory made, as the recursive mkdir does (undefined: all of it was there).
 */
export function makeDirs(dir: string, mode = 0o700): string | undefined {
  const first = outcome(mkdirError(dir, mode), dir);
  if (first !== "no-parent") return first === "made" ? dir : undefined;
  const above = makeDirs(path.dirname(dir), mode);
  return afterParent(mkdirError(dir, mode), dir, above);
}

/** `makeDirs` without blocking the thread. */
export async function makeDirsAsync(dir: string, mode = 0o700): Promise<string | undefined> {
  const first = outcome(await mkdirErrorAsync(dir, mode), dir);
  if (first !== "no-parent") return first === "made" ? dir : undefined;
  const above = await makeDirsAsync(path.dirname(dir), mode);
  return afterParent(await mkdirErrorAsync(dir, mode), dir, above);
}

function mkdirError(dir: string, mode: number): unknown {
  try {
    mkdirSync(dir, { mode });
    return undefined;
  } catch (error) {
    return error;
  }
}

function mkdirErrorAsync(dir: string, mode: number): Promise<unknown> {
  return fs.mkdir(dir, { mode }).then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** What one mkdir did; a failure other than a missing parent or an existing directory is thrown. */
function outcome(error: unknown, dir: string): "made" | "there" | "no-parent" {
  if (error === undefined) return "made";
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EEXIST" && isDirectory(dir)) return "there";
  if (code === "ENOENT" && path.dirname(dir) !== dir) return "no-parent";
  throw error;
}

/** The second try, its parent now there: ENOENT again means the system will not make it. */
function afterParent(error: unknown, dir: string, above: string | undefined): string | undefined {
  const result = outcome(error, dir);
  if (result === "no-parent") throw error;
  return result === "made" ? (above ?? dir) : above;
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
