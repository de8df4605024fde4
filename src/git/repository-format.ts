import { readFileSync } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";

/**
 * A repository whose objects are named by SHA-256 (`git init --object-format=sha256`) is refused
 * with a clear error: ghostcommit's stores, index reader and object writer name objects by
 * SHA-1, and git rejects an index or an object of the other format. So is one using a repository
 * extension git does not know (refs in a newer format, say), which git refuses to open.
 */
export function refuseUnsupportedFormat(root: string, commonDir: string): void {
  let config: string;
  try {
    config = readFileSync(path.join(commonDir, "config"), "utf8");
  } catch {
    return; // git itself reports an unreadable repository
  }
  if (/^[ \t]*objectformat[ \t]*=[ \t]*"?sha256"?[ \t]*$/im.test(config)) {
    throw new GhostcommitError(
      "not-a-workspace",
      `${root} is in a SHA-256 repository, which ghostcommit does not support yet`,
      { path: root },
    );
  }
  const unknown = unknownExtensions(config);
  if (unknown.length > 0) {
    throw new GhostcommitError(
      "not-a-workspace",
      `${root} is in a repository that uses ${unknown.map((e) => `extensions.${e}`).join(", ")}, which neither ghostcommit nor this git knows (a newer git made it?)`,
      { path: root },
    );
  }
}

/** The repository extensions git 2.39 knows, which it refuses a repository for using any other of. */
const KNOWN_EXTENSIONS = new Set([
  "noop",
  "noop-v1",
  "preciousobjects",
  "partialclone",
  "worktreeconfig",
  "objectformat",
]);

/** The `[extensions]` a format-1 repository's config names that git does not know. */
function unknownExtensions(config: string): string[] {
  if (!/^[ \t]*repositoryformatversion[ \t]*=[ \t]*1[ \t]*$/im.test(config)) return [];
  const unknown: string[] = [];
  let inExtensions = false;
  for (const line of config.split("\n")) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inExtensions = section[1].trim().toLowerCase() === "extensions";
    const key = inExtensions && !section ? /^\s*([A-Za-z][A-Za-z0-9-]*)/.exec(line) : null;
    if (key && !KNOWN_EXTENSIONS.has(key[1].toLowerCase())) unknown.push(key[1]);
  }
  return unknown;
}
