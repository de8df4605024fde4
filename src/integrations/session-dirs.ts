import { sha256Hex } from "../util/sha256.js";
import { existsSync, promises as fs, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { climbsOut } from "../paths.js";
import { writeFileAtomic } from "../store/layout.js";
import { makeDirs, makeDirsAsync } from "../util/make-dirs.js";
import type { AgentName } from "./event.js";

/** Records older than this are forgotten (a session idle that long starts afresh). */
const MAX_AGE_MS = 30 * 24 * 3600 * 1000;

function recordsDir(): string {
  return path.join(dataHome(), "hook-sessions");
}

function recordFile(agent: AgentName, session: string): string {
  const key = sha256Hex(`${agent}\0${session}`).slice(0, 32);
  return path.join(recordsDir(), `${key}.json`);
}

/**
 * What a session's record holds: the workspace its first event fixed, and whether that was a git
 * repository or a plain directory when last recorded. Read by every hook event before its work.
 */
export function sessionRecord(agent: AgentName, session: string): { dir?: string; kind?: "git" | "plain" } {
  try {
    // Synchronous: a small file, read before the event's work starts.
    const value = JSON.parse(readFileSync(recordFile(agent, session), "utf8")) as {
      dir?: unknown;
      kind?: unknown;
    };
    return {
      ...(typeof value.dir === "string" && value.dir !== "" ? { dir: value.dir } : {}),
      ...(value.kind === "git" || value.kind === "plain" ? { kind: value.kind } : {}),
    };
  } catch {
    return {};
  }
}

/** The workspace a session's first event fixed, if it has one. */
export async function sessionWorkspace(agent: AgentName, session: string): Promise<string | undefined> {
  return sessionRecord(agent, session).dir;
}

/**
 * Fixes a session's workspace (its first event's): later events from a subdirectory the agent
 * `cd`-ed into act in the same workspace. Forgets records of long-gone sessions on the way.
 */
export async function rememberWorkspace(
  agent: AgentName,
  session: string,
  dir: string,
  kind: "git" | "plain",
  agentProcesses?: string[],
): Promise<void> {
  try {
    await makeDirsAsync(recordsDir());
    const record = { dir, session, agent, kind, ...(agentProcesses ? { procs: agentProcesses } : {}) };
    await writeFileAtomic(recordFile(agent, session), JSON.stringify(record));
    const now = Date.now();
    for (const name of await fs.readdir(recordsDir())) {
      const file = path.join(recordsDir(), name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat && now - stat.mtimeMs > MAX_AGE_MS) await fs.rm(file, { force: true });
    }
  } catch {
    // without the record, the next event falls back to its own project directory
  }
}

/**
 * Marks a session active now (its prompt began a turn): a record is forgotten 30 days after its
 * session was last active, not after its first event, so a session used daily keeps its workspace.
 * `agentProcesses` (the hook's ancestors) are kept when they changed: a resumed conversation runs
 * in another agent process.
 */
export async function touchSessionRecord(
  agent: AgentName,
  session: string,
  agentProcesses?: string[],
): Promise<void> {
  const file = recordFile(agent, session);
  if (agentProcesses) {
    try {
      const record = JSON.parse(await fs.readFile(file, "utf8")) as Record<string, unknown>;
      if (JSON.stringify(record.procs) !== JSON.stringify(agentProcesses)) {
        await writeFileAtomic(file, JSON.stringify({ ...record, procs: agentProcesses }));
        return;
      }
    } catch {
      // no record to add them to: the time alone is kept
    }
  }
  const now = new Date();
  await fs.utimes(file, now, now).catch(() => {});
}

/** A session record as read: its workspace, when it was last active, the processes above its last prompt's hook. */
export interface SessionRecord {
  dir: string;
  session: string;
  agent: string;
  at: number;
  procs: string[];
}

/** Every session record, most recently active first. */
export async function sessionRecords(): Promise<SessionRecord[]> {
  let names: string[];
  try {
    names = await fs.readdir(recordsDir());
  } catch {
    return [];
  }
  const found: SessionRecord[] = [];
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const file = path.join(recordsDir(), name);
    try {
      const [text, stat] = await Promise.all([fs.readFile(file, "utf8"), fs.stat(file)]);
      const value = JSON.parse(text) as {
        dir?: unknown;
        session?: unknown;
        agent?: unknown;
        procs?: unknown;
      };
      if (typeof value.dir !== "string" || typeof value.session !== "string") continue;
      const agent = typeof value.agent === "string" ? value.agent : "";
      const procs = Array.isArray(value.procs) ? value.procs.filter((p) => typeof p === "string") : [];
      found.push({ dir: value.dir, session: value.session, agent, at: stat.mtimeMs, procs });
    } catch {
      // a record being written or removed
    }
  }
  return found.sort((a, b) => b.at - a.at);
}

/**
 * Agents' sessions whose workspace is a subdirectory of `root` (the agent was started there, with
 * no project directory of its own to name): by directory, most recently active first. A person
 * at the repository's root finds none of them there (each workspace keeps its own).
 */
export async function hookSessionsBelow(root: string): Promise<{ dir: string; sessions: string[] }[]> {
  return hookSessionsIn((dir) => isStrictlyBelow(dir, root));
}

/**
 * The same for workspaces between `repositoryRoot` and `root`, both left out: from a directory
 * below an agent's subdirectory workspace (`src/lib` under `src`), where its sessions are.
 */
export async function hookSessionsBetween(
  repositoryRoot: string,
  root: string,
): Promise<{ dir: string; sessions: string[] }[]> {
  return hookSessionsIn((dir) => isStrictlyBelow(dir, repositoryRoot) && isStrictlyBelow(root, dir));
}

/**
 * The same for workspaces that hold `root` (a plain directory of repositories, where an agent
 * started at the top keeps its sessions): from one of the repositories inside, where they are.
 */
export async function hookSessionsAbove(root: string): Promise<{ dir: string; sessions: string[] }[]> {
  return hookSessionsIn((dir) => isStrictlyBelow(root, dir));
}

function isStrictlyBelow(dir: string, top: string): boolean {
  const rel = path.relative(top, dir);
  return rel !== "" && !climbsOut(rel);
}

async function hookSessionsIn(
  keep: (dir: string) => boolean,
): Promise<{ dir: string; sessions: string[] }[]> {
  const byDir = new Map<string, string[]>();
  for (const { dir, session } of await sessionRecords()) {
    // A directory removed since (a worktree, a package): `-C` there would fail, so it is not named.
    if (keep(dir) && existsSync(dir)) byDir.set(dir, [...(byDir.get(dir) ?? []), session]);
  }
  return [...byDir].map(([dir, sessions]) => ({ dir, sessions }));
}

/**
 * The workspace of the agent's most recently begun session that holds `dir` (is it or above it):
 * where a command naming no session (an older Claude Code leaves it empty) run from the directory
 * the agent `cd`-ed into means to act.
 */
export async function latestWorkspaceHolding(agent: AgentName, dir: string): Promise<string | undefined> {
  return (await sessionRecords()).find((r) => {
    const rel = path.relative(r.dir, dir);
    return r.agent === agent && !climbsOut(rel);
  })?.dir;
}

/** The workspaces other than `root` where an agent's hooks keep a session with this id. */
export async function hookSessionDirs(session: string, root: string): Promise<string[]> {
  const dirs = (await sessionRecords()).filter((r) => r.session === session && r.dir !== root);
  return [...new Set(dirs.map((r) => r.dir))];
}

/**
 * Whether `text` is news to this session: why its workspace cannot be snapshotted is told at its
 * first prompt, and again only when the reason changes, not at every prompt. Kept beside the
 * session's record (and forgotten with it).
 */
export function newToSession(agent: AgentName, session: string, text: string): boolean {
  let file: string;
  try {
    file = recordFile(agent, session).replace(/\.json$/, ".told");
  } catch {
    return true; // no data directory to remember it in (GHOSTCOMMIT_HOME set wrong): told each time
  }
  try {
    if (readFileSync(file, "utf8") === text) return false;
  } catch {
    // not told yet
  }
  try {
    makeDirs(recordsDir());
    writeFileSync(file, text, { mode: 0o600 });
  } catch {
    // told again next time
  }
  return true;
}
