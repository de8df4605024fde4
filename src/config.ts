import { whereJsonFails } from "./util/json-error.js";
import { readFileSync } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "./errors.js";
import { userConfigPath } from "./util/data-dirs.js";
import { specialFileKind, symlinkTarget } from "./util/small-files.js";

/** Where snapshots go: a private git directory per workspace, or the user's own repository. */
export type StoreKind = "shadow" | "repo";

/** Refuses a store kind given by a caller (`what`: how it was named): a typo must not pick the other. */
export function checkStoreKind(value: unknown, what: string): void {
  if (value !== undefined && value !== "shadow" && value !== "repo") {
    throw new GhostcommitError("usage", `${what} must be "shadow" or "repo", not ${JSON.stringify(value)}`);
  }
}

/** Every tunable, with its default: capture thresholds, the plain-directory budget, retention and the size cap. */
export interface Settings {
  store: StoreKind;
  /** `false` turns ghostcommit into a no-op for the workspace (hooks stay silent). */
  enabled: boolean;
  /** Untracked or touched files larger than this are excluded (`large-file`). */
  largeFileBytes: number;
  /** Untracked directories with more files than this are excluded (`large-dir`); git workspaces only. */
  largeDirFiles: number;
  /** Directory names whose untracked content is never captured (`dependency-dir`). */
  dependencyDirs: string[];
  /** Plain directories: at most this many files per snapshot (`budget`). */
  budgetFiles: number;
  /** Plain directories: at most this many bytes per snapshot (`budget`). */
  budgetBytes: number;
  /** Snapshots older than this many days expire. */
  retentionDays: number;
  /** Past this store size the oldest snapshots expire first. */
  maxStoreBytes: number;
  /**
   * Git workspaces: "capture" captures nested repositories and submodules by their own rules;
   * "exclude" reports them as `nested-repo`. (Plain directories always capture them.)
   */
  nestedRepos: "exclude" | "capture";
  /**
   * Git workspaces: let status ask Watchman what changed, where Watchman is installed. "auto":
   * from `WATCHMAN_AUTO_FILES` tracked files (below that status is fast without it).
   */
  watchman: "auto" | boolean;
  /** Push sessions to a git remote in the background after each turn ends. */
  push?: PushSettings;
}

export interface PushSettings {
  remote: string;
  after: "turn" | "never";
  /** The background push sends snapshots holding files the repository ignores (`push --include-ignored`). */
  includeIgnored?: boolean;
}

export const DEFAULT_SETTINGS: Settings = {
  store: "shadow",
  enabled: true,
  largeFileBytes: 10 * 1024 * 1024,
  largeDirFiles: 200,
  dependencyDirs: [
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".tox",
    "target",
    "dist",
    "build",
    ".cache",
  ],
  budgetFiles: 50_000,
  budgetBytes: 2 * 1024 * 1024 * 1024,
  retentionDays: 30,
  maxStoreBytes: 2 * 1024 * 1024 * 1024,
  nestedRepos: "exclude",
  watchman: "auto",
};

/** With `"watchman": "auto"`, repositories with at least this many tracked files use Watchman. */
export const WATCHMAN_AUTO_FILES = 20_000;

/** The per-workspace config file name. */
export const WORKSPACE_CONFIG = ".ghostcommit.json";

function readConfigFile(file: string): Partial<Settings> {
  const special = specialFileKind(file);
  if (special !== null)
    throw new GhostcommitError("bad-config", `cannot read ${file}: it is ${special}, not a file`, { file });
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A symlink to nothing (a dotfile manager's broken link) is a file there that cannot be read.
    const target = code === "ENOENT" ? symlinkTarget(file) : null;
    if (target !== null) {
      throw new GhostcommitError(
        "bad-config",
        `cannot read ${file}: it is a symlink to ${target}, which is not there`,
        { file },
        error,
      );
    }
    if (code === "ENOENT" || code === "ENOTDIR") return {}; // no such file: the defaults
    // There but unreadable (permissions, a directory, a symlink loop): its settings, maybe
    // `"enabled": false`, must not be silently dropped.
    const why = code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : code;
    throw new GhostcommitError("bad-config", `cannot read ${file}: ${why}`, { file }, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new GhostcommitError(
      "bad-config",
      `${file} is not valid JSON${whereJsonFails(text, error)}`,
      { file },
      error,
    );
  }
  return validateSettings(parsed, file);
}

/** Checks a settings object key by key so a typo is reported instead of silently ignored. */
export function validateSettings(value: unknown, source: string): Partial<Settings> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GhostcommitError("bad-config", `${source}: settings must be a JSON object`);
  }
  const out: Partial<Settings> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const bad = (want: string) =>
      new GhostcommitError("bad-config", `${source}: "${key}" must be ${want}`, { key, source });
    switch (key) {
      case "store":
        if (raw !== "shadow" && raw !== "repo") throw bad('"shadow" or "repo"');
        out.store = raw;
        break;
      case "enabled":
        if (typeof raw !== "boolean") throw bad("true or false");
        out.enabled = raw;
        break;
      case "watchman":
        if (typeof raw !== "boolean" && raw !== "auto") throw bad('true, false or "auto"');
        out.watchman = raw;
        break;
      case "dependencyDirs":
        if (
          !Array.isArray(raw) ||
          raw.some((d) => typeof d !== "string" || d.includes("/") || d === "" || d === "." || d === "..")
        ) {
          throw bad('a list of directory names (such as "node_modules"; not "", "." or "..")');
        }
        out.dependencyDirs = raw as string[];
        break;
      case "largeFileBytes":
      case "largeDirFiles":
      case "budgetFiles":
      case "budgetBytes":
      case "maxStoreBytes":
        // Counts of files and bytes: 1.5 would be taken as some other limit than the one meant.
        if (!Number.isSafeInteger(raw) || (raw as number) < 0) throw bad("a non-negative whole number");
        out[key] = raw as number;
        break;
      case "retentionDays":
        // A span of time: 0.5 is half a day.
        if (typeof raw !== "number" || !Number.isFinite(raw) || raw < 0) throw bad("a non-negative number");
        out[key] = raw;
        break;
      case "nestedRepos":
        if (raw !== "exclude" && raw !== "capture") throw bad('"exclude" or "capture"');
        out.nestedRepos = raw;
        break;
      case "push":
        out.push = validatePush(raw, bad);
        break;
      case "$schema":
        break;
      default:
        throw new GhostcommitError("bad-config", `${source}: unknown setting "${key}"`, { key, source });
    }
  }
  return out;
}

function validatePush(raw: unknown, bad: (want: string) => GhostcommitError): PushSettings {
  const want = 'an object like {"remote": "origin", "after": "turn", "includeIgnored": false}';
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad(want);
  const {
    remote = "origin",
    after = "turn",
    includeIgnored = false,
    ...rest
  } = raw as Record<string, unknown>;
  // Which key is wrong, and what it holds: "must be an object" alone of an object says nothing.
  const wrong = (key: string, value: unknown, what: string) =>
    bad(
      `${want}: its "${key}" ${value === undefined ? "is not a setting" : `is ${JSON.stringify(value)}, not ${what}`}`,
    );
  if (typeof remote !== "string" || remote.trim() === "" || remote.startsWith("-"))
    throw wrong("remote", remote, "a remote name or URL");
  if (after !== "turn" && after !== "never") throw wrong("after", after, '"turn" or "never"');
  const [unknown] = Object.keys(rest);
  if (unknown !== undefined) throw wrong(unknown, undefined, "");
  if (typeof includeIgnored !== "boolean") throw wrong("includeIgnored", includeIgnored, "true or false");
  return { remote, after, ...(includeIgnored ? { includeIgnored } : {}) };
}

/**
 * Settings for a workspace: defaults < user config < the repository root's file < the workspace's
 * own < explicit overrides. A subdirectory of a repository (an agent started there) is a workspace
 * of its own, and the root's `"enabled": false` turns the whole repository off.
 */
export function loadSettings(
  workspaceRoot: string,
  overrides: Partial<Settings> = {},
  repositoryRoot: string = workspaceRoot,
): Settings {
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const [user, ...workspaceFiles] = settingsFiles(workspaceRoot, repositoryRoot);
  // `push` sends your work (ignored files too) to a remote after every turn: only your own config
  // decides that. A repository's file comes with a clone, and an agent can write it (doctor names
  // a `push` there as ignored).
  const files = workspaceFiles.map((file) => readConfigFile(file)).map(({ push: _, ...rest }) => rest);
  return Object.assign({ ...DEFAULT_SETTINGS, ...readConfigFile(user) }, ...files, defined);
}

/** The files `loadSettings` reads, the user's first, then the repository's and the workspace's. */
export function settingsFiles(workspaceRoot: string, repositoryRoot: string = workspaceRoot): string[] {
  const dirs = repositoryRoot === workspaceRoot ? [workspaceRoot] : [repositoryRoot, workspaceRoot];
  return [userConfigPath(), ...dirs.map((dir) => path.join(dir, WORKSPACE_CONFIG))];
}

/** Whether the workspace's own settings file sets `push`, which is not taken from there (see loadSettings). */
export function workspaceSetsPush(workspaceRoot: string): boolean {
  try {
    return readConfigFile(path.join(workspaceRoot, WORKSPACE_CONFIG)).push !== undefined;
  } catch {
    return false; // a damaged file is reported as such
  }
}
