import { nodeCrypto } from "../util/crypto.js";
import { readFileSync } from "node:fs";
import { specialFileKind, symlinkTarget } from "../util/small-files.js";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { fsError, GhostcommitError } from "../errors.js";
import type { RelPath } from "../paths.js";

export const GHOSTIGNORE = ".ghostignore";

export interface Ghostignore {
  matcher: IgnoreRules;
  /** Hash of the file's content, to key caches on. */
  hash: string;
}

/** Rules in gitignore syntax (a `.ghostignore` or a `.gitignore`), matching paths of its directory. */
export function ignoreMatcher(text: string, ignoreCase: boolean): Ignore {
  return ignore({ allowRelativePaths: true, ignorecase: ignoreCase }).add(text);
}

/** What a capture asks of `.ghostignore` rules: whether they keep a workspace-relative path out. */
export interface IgnoreRules {
  ignores(rel: string): boolean;
}

/**
 * Loads `.ghostignore` (gitignore syntax) from the workspace root, from the directories below it
 * that `below` names (workspace-relative; see `workspaceGhostignore`) and, for a workspace that
 * is a subdirectory of a repository, from each directory above it up to the work tree's top
 * (`top`): an agent started in `src/` must not capture what the repository's own `.ghostignore`
 * keeps out, nor one started at the top what `src/.ghostignore` does. Each file's rules match
 * paths of its directory; the deepest file that says something of a path decides it, as for
 * git's `.gitignore` files. Null when there is none. Its patterns match regardless of case only
 * where git's own ignore rules do (`ignoresCase`).
 */
export async function loadGhostignore(
  root: string,
  ignoreCase: boolean,
  top?: string | null,
  below: readonly RelPath[] = [],
  /** Files of the workspace taken as holding this text instead (null: as absent), by directory. */
  instead?: ReadonlyMap<RelPath, string | null>,
): Promise<Ghostignore | null> {
  const rulesIn = (dir: RelPath, file: string) => (instead?.has(dir) ? instead.get(dir)! : readRules(file));
  // Deepest first: the directories below the root, then the root, then those above it.
  const levels: { dir: RelPath | null; prefix: string; text: string }[] = [];
  const inside = new Set([...below, ...(instead?.keys() ?? [])]);
  for (const dir of [...inside].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1))) {
    if (dir === "") continue;
    const text = rulesIn(dir, path.join(root, Buffer.from(dir, "latin1").toString("utf8"), GHOSTIGNORE));
    if (text !== null) levels.push({ dir, prefix: "", text });
  }
  for (let dir = root, prefix = ""; ; prefix = `${path.basename(dir)}/${prefix}`, dir = path.dirname(dir)) {
    const file = path.join(dir, GHOSTIGNORE);
    const text = prefix === "" ? rulesIn("", file) : readRules(file);
    if (text !== null) levels.push({ dir: null, prefix, text });
    if (!top || dir === top || !dir.startsWith(`${top}/`)) break;
  }
  if (levels.length === 0) return null;
  const hashed = (text: string) =>
    nodeCrypto()
      .createHash("sha1")
      .update(ignoreCase ? `i\0${text}` : text)
      .digest("hex");
  // The workspace's own file alone, as most are: its matcher and hash as they always were.
  if (levels.length === 1 && levels[0].dir === null && levels[0].prefix === "") {
    return { matcher: ignoreMatcher(levels[0].text, ignoreCase), hash: hashed(levels[0].text) };
  }
  const matcher = layeredRules(
    levels.map(({ dir, prefix, text }) => ({
      dir: dir ?? "",
      prefix,
      rules: ignoreMatcher(text, ignoreCase),
    })),
  );
  const described = levels.map(({ dir, prefix, text }) => `${dir === null ? prefix : `./${dir}/`}\0${text}`);
  return { matcher, hash: hashed(described.join("\0")) };
}

/**
 * Several files' rules as one: each matches the paths below its directory (`dir`, "" for the
 * root), written as seen from the file (`prefix` + the path below `dir`); the first, deepest, that
 * says something of a path decides it.
 */
export function layeredRules(levels: { dir: RelPath; prefix: string; rules: Ignore }[]): IgnoreRules {
  const matchers = levels.map((level) => ({ ...level, inside: level.dir === "" ? "" : `${level.dir}/` }));
  return {
    ignores(rel) {
      for (const { inside, prefix, rules } of matchers) {
        if (!rel.startsWith(inside) || rel === inside) continue;
        const said = rules.test(`${prefix}${rel.slice(inside.length)}`);
        if (said.ignored) return true;
        if (said.unignored) return false;
      }
      return false;
    },
  };
}

export function depth(dir: RelPath): number {
  return dir.split("/").length;
}

/** A `.ghostignore` file's rules, or null where there is none; one that cannot be read stops the capture. */
function readRules(file: string): string | null {
  const special = specialFileKind(file);
  if (special !== null)
    throw new GhostcommitError(
      "io",
      `cannot read ${file}: it is ${special}, not a file; its rules keep files out of every snapshot, so none is taken until it is a file or is removed`,
      { path: file },
    );
  try {
    return readFileSync(file, "utf8"); // small, and usually not there
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A symlink to nothing (a shared file on a disk not mounted, a broken dotfile link) is a file
    // that cannot be read, not no file: taken for none, its rules would let secrets in.
    const target = code === "ENOENT" ? symlinkTarget(file) : null;
    if (target !== null) {
      throw new GhostcommitError(
        "io",
        `cannot read ${file}: it is a symlink to ${target}, which is not there (ENOENT); its rules keep files out of every snapshot, so none is taken until it can be read or is removed`,
        { path: file, errno: "ENOENT" },
        error,
      );
    }
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    // Its rules keep secrets out of every snapshot and restore: without them neither may run.
    throw fsError(error, "read", file);
  }
}
