import { realpathSync } from "node:fs";
import path from "node:path";
import { climbsOut } from "../paths.js";

/**
 * A hook's path as a workspace-relative, '/'-separated path, null when it is outside the
 * workspace, or ".git" for a path in a `.git` directory (never recorded). Agents send the workspace as they see it, which may be a symlinked
 * path to the real root, so both spellings are tried.
 */
export function workspacePath(root: string, dir: string, base: string, given: string): string | null {
  const absolute = path.resolve(base, given);
  const candidates = [absolute];
  try {
    candidates.push(path.join(realpathSync(path.dirname(absolute)), path.basename(absolute)));
  } catch {
    // the parent does not exist yet (the edit creates it)
  }
  for (const candidate of candidates) {
    for (const top of [root, path.resolve(dir)]) {
      const rel = path.relative(top, candidate);
      if (rel === "" || climbsOut(rel)) continue;
      const parts = rel.split(path.sep);
      if (parts.some((p) => p.toLowerCase() === ".git")) return ".git";
      return parts.join("/");
    }
  }
  return null;
}
