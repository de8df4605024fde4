import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { WorkspaceLocation } from "../git/repository.js";
import { nodeCrypto } from "../util/crypto.js";
import type { OutsideRules, RuleLevel } from "../store/metadata.js";
import { ignoresCase, readUserGitConfig } from "./conversion.js";
import { GHOSTIGNORE } from "./ghostignore.js";

export type { OutsideRules, RuleLevel };

/** Past this many characters of rules only their hash is kept (each snapshot's message holds them). */
const KEPT_CHARS = 32 * 1024;

function isOutsideRules(value: unknown): value is OutsideRules {
  const v = value as OutsideRules | null;
  const levels = (l: unknown) =>
    l === undefined ||
    (Array.isArray(l) && l.every((x) => typeof x?.prefix === "string" && typeof x?.text === "string"));
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.git === "string" &&
    levels(v.gitLevels) &&
    levels(v.ghostLevels)
  );
}

/** Reads the rules outside a git workspace's tree as git and the capture apply them now, all of them. */
export function readOutsideRules(
  location: WorkspaceLocation,
  excludesFile: string | null,
  ignoreCase: boolean,
): OutsideRules {
  const top = location.worktreeRoot ?? location.root;
  const below = location.prefix === "" ? "" : `${location.prefix}/`;
  const git: RuleLevel[] = [];
  const add = (levels: RuleLevel[], file: string, prefix: string) => {
    const text = ruleLines(file);
    if (text !== "") levels.push({ prefix, text });
  };
  add(git, excludesFilePath(excludesFile, location.root), below);
  if (location.commonDir) add(git, path.join(location.commonDir, "info", "exclude"), below);
  const above: string[] = []; // the directories above the workspace, top first
  for (let dir = location.root; dir !== top && dir.startsWith(`${top}/`); ) {
    dir = path.dirname(dir);
    above.unshift(dir);
  }
  const ghost: RuleLevel[] = [];
  for (const dir of above) {
    const prefix = `${path.relative(dir, location.root).split(path.sep).join("/")}/`;
    add(git, path.join(dir, ".gitignore"), prefix);
    add(ghost, path.join(dir, GHOSTIGNORE), prefix);
  }
  ghost.reverse();
  return {
    // The case rule is part of them: `*.TMP` ignored `a.tmp` only where git ignores case.
    git: hashOf(JSON.stringify(ignoreCase ? [git, "ignoreCase"] : git)),
    ...(ignoreCase ? { ignoreCase: true as const } : {}),
    ...(git.length > 0 ? { gitLevels: git } : {}),
    ...(ghost.length > 0 ? { ghostLevels: ghost } : {}),
  };
}

/** The rules as a snapshot keeps them: only their hashes where they are too long for its message. */
export function outsideRecord(rules: OutsideRules): OutsideRules {
  const levels = [...(rules.gitLevels ?? []), ...(rules.ghostLevels ?? [])];
  const size = levels.reduce((n, l) => n + l.text.length + l.prefix.length, 0);
  if (size <= KEPT_CHARS) return rules;
  const { git, ignoreCase } = rules;
  return {
    git,
    ...(ignoreCase ? { ignoreCase } : {}),
    ghost: hashOf(JSON.stringify(rules.ghostLevels ?? [])),
    cut: true,
  };
}

/**
 * The `.gitignore`-like rules outside the tree a snapshot was taken under, where they differ from
 * now's: its absences are judged by them. Undefined where they are the same, or the snapshot
 * predates the record (judged by today's, as it always was); "unknown" where they changed but
 * only their hash was kept (no absence of the scope is proven).
 */
function gitRulesThen(
  then: OutsideRules | undefined,
  now: OutsideRules,
): RuleLevel[] | "unknown" | undefined {
  if (then === undefined) return undefined;
  if (!isOutsideRules(then)) return "unknown"; // a record not of ours (a forged session's)
  if (then.git === now.git) return undefined;
  return then.cut ? "unknown" : (then.gitLevels ?? []);
}

/** The `.ghostignore` rules above the workspace a snapshot was taken under (see `gitRulesThen`). */
function ghostRulesThen(then: OutsideRules | undefined, now: OutsideRules): RuleLevel[] | "unknown" {
  if (then === undefined) return [];
  if (!isOutsideRules(then)) return "unknown";
  if (!then.cut) return then.ghostLevels ?? [];
  return then.ghost === hashOf(JSON.stringify(now.ghostLevels ?? [])) ? (now.ghostLevels ?? []) : "unknown";
}

/** Where git reads `core.excludesFile` from: as configured (`~/` expanded), else the XDG default. */
function excludesFilePath(configured: string | null, cwd: string): string {
  if (configured !== null) {
    if (configured.startsWith("~/")) return path.join(os.homedir(), configured.slice(2));
    return path.resolve(cwd, configured);
  }
  const xdg = process.env.XDG_CONFIG_HOME;
  return xdg ? path.join(xdg, "git", "ignore") : path.join(os.homedir(), ".config", "git", "ignore");
}

/** A rules file's patterns without its blank and comment lines; "" where there is none or it cannot be read. */
function ruleLines(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8"); // small, and usually not there
  } catch {
    return ""; // git reads none either (a file it cannot read is skipped with a warning)
  }
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .join("\n");
}

function hashOf(text: string): string {
  return nodeCrypto().createHash("sha1").update(text).digest("hex");
}

/** Today's rules outside a git workspace's tree, to judge a snapshot's absences by; null in a plain directory. */
async function outsideRulesNow(location: WorkspaceLocation, storeDir: string): Promise<OutsideRules | null> {
  if (location.kind !== "git") return null;
  const config = await readUserGitConfig(location, storeDir);
  return readOutsideRules(location, config.excludesFile, config.ignoreCase);
}

/**
 * Whether git ignored case when a snapshot was taken, as it recorded; undefined for one taken
 * before that was kept (judged by today's). Its rules match as they matched then.
 */
function ignoreCaseThen(then: OutsideRules | undefined): boolean | undefined {
  return then !== undefined && isOutsideRules(then) ? then.ignoreCase === true : undefined;
}

/**
 * What a snapshot's absences are judged by beside its own tree: the `.gitignore`-like rules outside
 * it where they changed since (`git`, see `gitRulesThen`), the `.ghostignore` files above the
 * workspace (`ghost`), and whether its rules matched regardless of case then (`ignoreCase`).
 */
export async function rulesOfSnapshot(
  location: WorkspaceLocation,
  storeDir: string,
  then: OutsideRules | undefined,
): Promise<{
  git: RuleLevel[] | "unknown" | undefined;
  ghost: RuleLevel[] | "unknown";
  ignoreCase: () => Promise<boolean>;
}> {
  const now = await outsideRulesNow(location, storeDir);
  return {
    git: now ? gitRulesThen(then, now) : undefined,
    ghost: now ? ghostRulesThen(then, now) : [],
    ignoreCase: async () => ignoreCaseThen(then) ?? (await ignoresCase(location, storeDir)),
  };
}
