import { readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CatFile } from "../git/cat-file.js";
import { runGit } from "../git/exec.js";
import { ancestorsOf, fsPath, type RelPath } from "../paths.js";
import { STORE_FILES, readJson, writeFileAtomic } from "../store/layout.js";
import type { WorkspaceLocation } from "../git/repository.js";
import { entryAt } from "../git/trees.js";
import { readTextOrEmpty } from "../util/small-files.js";

/** An attribute that makes git change bytes between the work tree and the index (set, not unset). */
const CONVERTING_ATTRIBUTE = /(^|\s)(text|eol|crlf|filter|ident|working-tree-encoding)(=|\s|$)/m;
/** Attributes whose clean step may rewrite bytes freely (a program, a re-encoding). */
const FREE_ATTRIBUTE = /^(filter|working-tree-encoding)(=(.*))?$/;

/** Attribute lines without comments, each without its pattern (macro definitions included). */
function attributeSettings(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .map((line) => line.trim().replace(/^\S+/, ""));
}

export function attributesConvert(text: string): boolean {
  return attributeSettings(text).some((rest) => CONVERTING_ATTRIBUTE.test(rest));
}

/**
 * How the user's git converts content, or null where it does not. The text, eol, crlf and ident
 * conversions only ever remove bytes when cleaning (CR before LF, an expanded `$Id$`), so a file
 * git calls clean is proven byte-identical to its blob when their sizes match. Filters and
 * working-tree encodings can rewrite anything: `perFile` names those files as attribute pathspecs
 * (to be checked one by one), or is null where they cannot be named that way.
 */
export interface Conversion {
  perFile: string[] | null;
}

function addConversion(into: Conversion | null, text: string): Conversion | null {
  if (!attributesConvert(text)) return into;
  const out: Conversion = into ?? { perFile: [] };
  for (const rest of attributeSettings(text)) {
    for (const token of rest.split(/\s+/)) {
      const match = FREE_ATTRIBUTE.exec(token);
      if (!match || out.perFile === null) continue;
      if (match[3] !== undefined && !/^[\w.+-]+$/.test(match[3])) out.perFile = null;
      else if (!out.perFile.includes(`:(attr:${token})`)) out.perFile.push(`:(attr:${token})`);
    }
  }
  return out;
}

/** The settings of the user's git (all levels) that change what a snapshot must hold. */
export interface UserGitConfig {
  /** core.autocrlf is true or input somewhere. */
  autocrlf: boolean;
  attributesFile: string | null;
  /** core.excludesFile as written (git expands `~` itself); null when unset. */
  excludesFile: string | null;
  /** core.ignoreCase: ignore rules match names without regard to case (git's default: no). */
  ignoreCase: boolean;
}

/** The config files git reads here; a change to any of them (mtime, size) invalidates the cache. */
function configSources(location: WorkspaceLocation): string[] {
  const home = os.homedir();
  const xdg = process.env.XDG_CONFIG_HOME || path.join(home, ".config");
  const sources = [
    path.join(location.commonDir!, "config"),
    path.join(location.gitDir!, "config.worktree"),
    process.env.GIT_CONFIG_GLOBAL ?? path.join(home, ".gitconfig"),
    path.join(xdg, "git", "config"),
  ];
  if (!process.env.GIT_CONFIG_NOSYSTEM) sources.push(process.env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig");
  return sources;
}

function configStamp(location: WorkspaceLocation): string | null {
  const stamps: unknown[] = [];
  for (const file of configSources(location)) {
    try {
      const stat = statSync(file);
      // A file it includes (`[include]`, `[includeIf "onbranch:…"]`) can change, or apply, with
      // none of these changing: such a config is read every time, never taken from the cache.
      if (/\[\s*include/i.test(readFileSync(file, "latin1"))) return null;
      stamps.push([file, stat.mtimeMs, stat.size, stat.ino]);
    } catch {
      stamps.push([file, null]);
    }
  }
  return JSON.stringify(stamps);
}

/**
 * Whether status can start before the user's config is read: no repository-level config file can
 * set core.excludesFile, and no config file at all core.ignoreCase (none names them or pulls in
 * another file). Status runs from a git directory of its own, whose config hides those levels, so
 * their values must be passed to it; the global excludes file it reads itself. Then it need not
 * wait for `readUserGitConfig`'s git process (a first snapshot, or one after a config change).
 */
export function statusCanStartBeforeConfig(location: WorkspaceLocation): boolean {
  const sources = configSources(location);
  const repositoryLevel = new Set(sources.slice(0, 2));
  for (const file of sources) {
    let text: string;
    try {
      text = readFileSync(file, "latin1");
    } catch {
      continue; // absent: sets nothing
    }
    if (/ignorecase|\[\s*include/i.test(text)) return false;
    if (repositoryLevel.has(file) && /excludesfile/i.test(text)) return false;
  }
  return true;
}

/**
 * Reads the user's autocrlf, attributesFile, excludesFile and ignoreCase in one git process, or from a cache
 * in the store while no config file changed (saving a process per snapshot). Files pulled in with
 * `[include]` are not watched: change a top-level file (or run `doctor --repair`) after editing one.
 */
export async function readUserGitConfig(
  location: WorkspaceLocation,
  storeDir?: string,
): Promise<UserGitConfig> {
  const stamp = configStamp(location);
  const cacheFile = storeDir && stamp !== null ? path.join(storeDir, STORE_FILES.gitConfig) : null;
  if (cacheFile) {
    const cached = await readJson<{ stamp?: string; config?: UserGitConfig } | null>(cacheFile, null);
    const kept = cached?.config;
    if (
      cached?.stamp === stamp &&
      typeof kept?.autocrlf === "boolean" &&
      typeof kept.ignoreCase === "boolean"
    )
      return kept;
  }
  // `git var -l` lists every setting as git reads it and, as every git command but `git config`
  // does, fails on a value git cannot take (`core.autocrlf = maybe`): then so does every command
  // here (bad-config), as the user's own git does, where a capture whose status reads only the
  // store's copy of the settings would go on with conversions git itself refuses to guess.
  const config = await runGit(["var", "-l"], { cwd: location.root, env: { GIT_LITERAL_PATHSPECS: "0" } });
  const out: UserGitConfig = { autocrlf: false, attributesFile: null, excludesFile: null, ignoreCase: false };
  for (const line of config.stdout.toString("utf8").split("\n")) {
    const match = /^(core\.(?:autocrlf|attributesfile|excludesfile|ignorecase))(=?)(.*)$/i.exec(line);
    if (!match) continue;
    const key = match[1].toLowerCase();
    // A key with no value at all (no `=`) is true.
    const newline = match[2] === "" ? -1 : 0;
    const raw = match[3].trim();
    if (key === "core.autocrlf" && (raw.toLowerCase() === "true" || raw.toLowerCase() === "input")) {
      out.autocrlf = true;
    }
    if (key === "core.attributesfile") out.attributesFile = raw.replace(/^~(?=\/)/, os.homedir());
    if (key === "core.excludesfile") out.excludesFile = raw === "" ? null : raw;
    // The last one wins, as for git; a key with no value is true.
    if (key === "core.ignorecase") out.ignoreCase = newline === -1 || /^(true|yes|on|1)$/i.test(raw);
  }
  if (cacheFile)
    await writeFileAtomic(cacheFile, JSON.stringify({ stamp, config: out }), 0o600, false).catch(() => {}); // a cache
  return out;
}

/**
 * How the user's git converts content (autocrlf, text/eol attributes, clean filters such as
 * LFS), or null. Where it does, a file git calls unchanged can still differ byte for byte from the
 * blob in the user's index, so its stat cache alone cannot be trusted (see clean-proof.ts).
 */
export async function userGitConverts(
  location: WorkspaceLocation,
  cat: CatFile,
  rootTree: string | null,
  treeAttributeFiles: RelPath[],
  config: UserGitConfig,
): Promise<Conversion | null> {
  let conversion: Conversion | null = config.autocrlf ? { perFile: [] } : null;
  const attributesFile = config.attributesFile;
  const xdg = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config");
  const outsideFiles = [
    path.join(location.commonDir!, "info", "attributes"),
    attributesFile ?? path.join(xdg, "git", "attributes"),
  ];
  for (const file of outsideFiles) conversion = addConversion(conversion, readTextOrEmpty(file));
  // Committed .gitattributes: in the workspace, and in the directories above it.
  const prefix = location.prefix;
  const above = prefix === "" ? [] : ["", ...ancestorsOf(prefix)];
  const inTree = [
    ...above.map((dir) => (dir === "" ? ".gitattributes" : `${dir}/.gitattributes`)),
    ...treeAttributeFiles.map((rel) => (prefix === "" ? rel : `${prefix}/${rel}`)),
  ];
  for (const rel of inTree) {
    const entry = await entryAt(cat, rootTree, rel);
    const blob = entry ? await cat.read(entry.oid) : null;
    if (blob) conversion = addConversion(conversion, blob.content.toString("utf8"));
  }
  return conversion;
}

/** Whether `.gitattributes` files changed or added on disk (workspace-relative) convert content. */
export async function changedAttributesConvert(
  root: string,
  files: RelPath[],
  conversion: Conversion | null,
): Promise<Conversion | null> {
  for (const rel of files) conversion = addConversion(conversion, readTextOrEmpty(fsPath(root, rel)));
  return conversion;
}

export function isAttributesFile(rel: RelPath): boolean {
  return rel === ".gitattributes" || rel.endsWith("/.gitattributes");
}

/**
 * Whether ignore rules (`.gitignore`, `.ghostignore`) match regardless of case, as git matches
 * them here: the repository's core.ignoreCase (unset means no, whatever the file system), and in
 * a plain directory the platform's usual file system.
 */
export async function ignoresCase(location: WorkspaceLocation, storeDir?: string): Promise<boolean> {
  if (location.kind === "git") return (await readUserGitConfig(location, storeDir)).ignoreCase;
  return process.platform === "darwin" || process.platform === "win32";
}
