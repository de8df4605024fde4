import { realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { GhostcommitError } from "./errors.js";
import { quotedPath } from "./util/format.js";

/**
 * A workspace-relative path as git stores it: '/'-separated bytes, kept in a "binary string"
 * (one char per byte, latin1). This round-trips names that are not UTF-8, sorts like git
 * (bytewise) and works as a Map key. Convert only at the edges.
 */
export type RelPath = string;

/** U+FFFD, the mark of bytes that are not UTF-8 once shown, as a RelPath holds it (its UTF-8 bytes). */
export const SHOWN_REPLACEMENT: RelPath = "\xef\xbf\xbd";

/** Bytes (from git or the file system) to a RelPath. */
export function relFromBytes(bytes: Buffer): RelPath {
  return bytes.toString("latin1");
}

/** A path typed by a person or read from JSON (UTF-8) to a RelPath. */
export function relFromText(text: string): RelPath {
  return Buffer.from(text, "utf8").toString("latin1");
}

/** The bytes of a RelPath. */
export function relBytes(rel: RelPath): Buffer {
  return Buffer.from(rel, "latin1");
}

/** A RelPath for people and JSON: UTF-8 decoded (names that are not UTF-8 show replacement chars). */
export function displayPath(rel: RelPath): string {
  return relBytes(rel).toString("utf8");
}

/** Absolute file-system path (as bytes, so any name works) of a RelPath under root. */
export function fsPath(root: string, rel: RelPath): Buffer {
  if (rel === "") return Buffer.from(root, "utf8");
  return Buffer.concat([Buffer.from(root, "utf8"), Buffer.from("/"), relBytes(rel)]);
}

/**
 * Whether `rel` names a path inside the workspace as ghostcommit makes them: components neither
 * empty nor `.` or `..`, no NUL. One written elsewhere (a fetched journal or snapshot, forged or
 * damaged) may not, and must never be read or written: `../x` is outside the workspace.
 */
export function isCleanRel(rel: unknown): rel is RelPath {
  if (typeof rel !== "string" || rel === "" || rel.includes("\0")) return false;
  // No component is empty, "." or "..": one test, no array (a session journal's every path is checked as it is read).
  return !UNCLEAN_COMPONENT.test(rel);
}

const UNCLEAN_COMPONENT = /(?:^|\/)\.{0,2}(?:\/|$)/;

/** Parent directory of a RelPath ("" for top level). */
export function parentOf(rel: RelPath): RelPath {
  const slash = rel.lastIndexOf("/");
  return slash === -1 ? "" : rel.slice(0, slash);
}

/** Every ancestor directory of rel, outermost first ("a", "a/b" for "a/b/c"). */
export function ancestorsOf(rel: RelPath): RelPath[] {
  const out: RelPath[] = [];
  for (let i = rel.indexOf("/"); i !== -1; i = rel.indexOf("/", i + 1)) out.push(rel.slice(0, i));
  return out;
}

/** True when rel equals dir or lies below it. */
export function isWithin(rel: RelPath, dir: RelPath): boolean {
  return dir === "" || rel === dir || rel.startsWith(`${dir}/`);
}

/** True if any component is `.git` (any case): such a path is never captured, written or deleted. */
export function touchesGitDir(rel: RelPath): boolean {
  return rel.split("/").some((part) => part.toLowerCase() === ".git");
}

/**
 * Resolves a user-given path (absolute or relative to `base`) to a RelPath inside `root`.
 * Refuses anything that lands outside the workspace, so nothing is written for it.
 */
export function resolveInside(
  root: string,
  base: string,
  given: string,
  linksInside: "follow" | "keep" = "follow",
): RelPath {
  // No file name holds a NUL byte; the system would cut the path there and name another file.
  if (given.includes("\0"))
    throw new GhostcommitError("usage", `a path cannot hold a NUL byte: ${JSON.stringify(given)}`);
  const spelled = path.resolve(base, given);
  const absolute = linksInside === "keep" ? keepLinksInside(root, spelled) : realpathOfExisting(spelled);
  const relative = path.relative(root, absolute);
  if (relative === "") return "";
  if (!isUnder(root, absolute)) {
    throw new GhostcommitError("outside-workspace", `path is outside the workspace: ${quotedPath(given)}`, {
      path: given,
    });
  }
  const rel = relFromText(relative.split(path.sep).join("/"));
  if (touchesGitDir(rel)) {
    throw new GhostcommitError("outside-workspace", `path is inside a .git directory: ${quotedPath(given)}`, {
      path: given,
    });
  }
  return rel;
}

/**
 * For a path that names an entry of a snapshot (restore, rewind, diff): symlinks above the
 * workspace are resolved (a workspace reached through a link), those inside it are not, so
 * `d/f` stays `d/f` when `d` has become a link to another directory of the workspace.
 */
function keepLinksInside(root: string, absolute: string): string {
  if (isUnder(root, absolute)) return absolute;
  const parts = absolute.split(path.sep);
  for (let i = 2; i < parts.length; i++) {
    let real: string;
    try {
      real = realpathSync(parts.slice(0, i).join(path.sep) || path.sep);
    } catch {
      break;
    }
    if (isUnder(root, real)) return path.join(real, ...parts.slice(i));
  }
  return realpathOfExisting(absolute);
}

function isUnder(root: string, absolute: string): boolean {
  return !climbsOut(path.relative(root, absolute));
}

/**
 * True when `relative` (what `path.relative` returned) leaves the directory it was taken from.
 * Only a whole ".." component climbs: `..env.local` or `...` is a file's name inside it.
 */
export function climbsOut(relative: string): boolean {
  return relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

/**
 * Resolves symlinks in the longest existing ancestor of `absolute` (the path itself may not exist
 * yet), so a path spelled through a symlinked directory still lands inside the workspace.
 * The last component is never resolved: a symlink named by the user is itself the path.
 */
function realpathOfExisting(absolute: string): string {
  const parent = path.dirname(absolute);
  if (parent === absolute) return absolute;
  try {
    return path.join(realpathSync(parent), path.basename(absolute));
  } catch {
    return path.join(realpathOfExisting(parent), path.basename(absolute));
  }
}

/** The directory `given` names, absolute: a relative one against the current directory; none, that. */
export function directoryNamed(given: string | undefined): string {
  return given !== undefined && path.isAbsolute(given)
    ? given
    : path.resolve(currentDirectory(), given ?? ".");
}

/** The process's current directory; one deleted (or moved) since it was entered is said to be gone. */
export function currentDirectory(): string {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch (error) {
    throw new GhostcommitError(
      "not-a-workspace",
      "the current directory no longer exists (deleted or moved?): change to the workspace, or name it",
      { path: "." },
      error,
    );
  }
  // Node decodes the directory's path as UTF-8, a byte it cannot decode becoming U+FFFD: that
  // string may name no directory, or a sibling spelled with U+FFFD, which a restore would change.
  if (cwd.includes("\uFFFD") && !sameDirectory(cwd, ".")) {
    throw new GhostcommitError(
      "not-a-workspace",
      `the current directory's path is not valid UTF-8, so it cannot be named (it reads as ${quotedPath(cwd)}): run ghostcommit from a directory above it with -C, or rename the directory`,
      { path: cwd },
    );
  }
  return cwd;
}

function sameDirectory(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** `$HOME` or `/`: never a workspace to capture (a snapshot there would hold everything the user owns). */
export function isTooBroad(dir: string): boolean {
  try {
    const real = realpathSync(dir);
    return real === path.parse(real).root || real === realpathSync(os.homedir());
  } catch {
    return false;
  }
}

/**
 * The refusal to capture `dir` (see `isTooBroad`); `advice` says what to do instead, in the words
 * of the caller (the command line names -C, the library a directory to open).
 */
export function tooBroadError(dir: string, advice = "open a project directory instead"): GhostcommitError {
  return new GhostcommitError(
    "not-a-workspace",
    `not snapshotting ${dir} (home or root directory): a snapshot there would hold everything you own; ${advice}`,
    { path: dir },
  );
}
