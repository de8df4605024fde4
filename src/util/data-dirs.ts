import { statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { GhostcommitError } from "../errors.js";

/** Where ghostcommit's own files live: the user's config file and the data directory of every store. */

/** The user-wide config file: `$XDG_CONFIG_HOME/ghostcommit/config.json` (default `~/.config/...`). */
export function userConfigPath(): string {
  const base = xdgDir("XDG_CONFIG_HOME") ?? path.join(os.homedir(), ".config");
  return path.join(base, "ghostcommit", "config.json");
}

/**
 * The data directory holding every store: `$GHOSTCOMMIT_HOME`, else the XDG data dir. A relative
 * GHOSTCOMMIT_HOME is refused: taken from each command's directory, it gave each directory a store
 * of its own (snapshots seemed to vanish), most often inside the workspace.
 */
export function dataHome(): string {
  const home = process.env.GHOSTCOMMIT_HOME;
  if (home && !path.isAbsolute(home)) {
    throw new GhostcommitError(
      "bad-config",
      `GHOSTCOMMIT_HOME must be an absolute path, not ${JSON.stringify(home)}: relative, it would name another directory from each directory a command runs in`,
      { source: "GHOSTCOMMIT_HOME" },
    );
  }
  const dir = home
    ? path.resolve(home)
    : path.join(xdgDir("XDG_DATA_HOME") ?? path.join(os.homedir(), ".local", "share"), "ghostcommit");
  if (process.getuid?.() === 0)
    refuseOthersDataHome(dir, home ? "GHOSTCOMMIT_HOME" : xdgDir("XDG_DATA_HOME") ? "XDG_DATA_HOME" : "HOME");
  return dir;
}

/** What chose the data directory, for a message saying it cannot be used. */
export function dataHomeChosenBy(): string {
  if (process.env.GHOSTCOMMIT_HOME) return "GHOSTCOMMIT_HOME sets it";
  if (xdgDir("XDG_DATA_HOME")) return "XDG_DATA_HOME sets it, GHOSTCOMMIT_HOME another";
  return "the default under HOME; GHOSTCOMMIT_HOME or XDG_DATA_HOME sets another";
}

/** Data directories root may use: checked once each (every command names its own a few times). */
const rootMayUse = new Set<string>();

/**
 * Root with another user's data directory (`sudo -E` keeps HOME): the files root would leave there,
 * root's own, would stop that user's next runs (a snapshot failed on an object directory it could
 * not write, and its doctor saw nothing). Judged by the owner of the directory, or of the nearest
 * one above it that exists.
 */
function refuseOthersDataHome(dir: string, source: string): void {
  if (rootMayUse.has(dir)) return;
  for (let at = dir; ; at = path.dirname(at)) {
    let owner: number;
    try {
      owner = statSync(at).uid;
    } catch {
      if (path.dirname(at) === at) break;
      continue;
    }
    if (owner === 0) break;
    throw new GhostcommitError(
      "bad-config",
      `running as root, with the data directory of another user (uid ${owner}, set by ${source}, as \`sudo -E\` keeps it): ${dir}. Files root wrote there would stop that user's own runs. Run ghostcommit as that user, or give root its own data directory (\`sudo -H\`, or GHOSTCOMMIT_HOME=/root/.local/share/ghostcommit)`,
      { source },
    );
  }
  rootMayUse.add(dir);
}

/** An XDG base directory from the environment; a relative one is invalid and ignored, as the XDG spec says. */
function xdgDir(name: "XDG_CONFIG_HOME" | "XDG_DATA_HOME"): string | undefined {
  const value = process.env[name];
  return value && path.isAbsolute(value) ? value : undefined;
}
