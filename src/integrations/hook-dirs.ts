import { realpathSync } from "node:fs";
import path from "node:path";
import { locateWorkspace } from "../git/repository.js";
import { climbsOut } from "../paths.js";
import type { AgentName } from "./event.js";

/** Environment variables naming the project directory, per agent. */
const PROJECT_ENV: Record<AgentName, string | undefined> = {
  "claude-code": "CLAUDE_PROJECT_DIR",
  codex: undefined,
  cursor: "CURSOR_PROJECT_DIR",
  gemini: "GEMINI_PROJECT_DIR",
};

/** The hook's own directory for an event naming none; not Cursor's (its user hooks run in ~/.cursor). */
export function ownDir(agent: AgentName): string | undefined {
  return agent === "cursor" ? undefined : process.cwd();
}

export function envDir(agent: AgentName): string | undefined {
  const name = PROJECT_ENV[agent];
  return name ? process.env[name] || undefined : undefined;
}

/**
 * The git work tree an agent works in when it is not its project directory's own: Claude Code runs
 * a session in a linked worktree (`.claude/worktrees/<name>`, or beside the repository) while
 * `CLAUDE_PROJECT_DIR` names where it started. Snapshots of the project directory would leave that
 * work out (a nested repository inside it, or outside it altogether). It is another work tree of
 * the same repository, or any repository below a project directory that is a repository itself
 * (a plain project directory captures the repositories it holds). Null otherwise, or when unsure.
 */
export async function workTreeOfCwd(
  projectDir: string | undefined,
  cwd: string | undefined,
): Promise<string | null> {
  if (!projectDir || !cwd || path.resolve(projectDir) === path.resolve(cwd)) return null;
  try {
    const [project, here] = await Promise.all([locateWorkspace(projectDir), locateWorkspace(cwd)]);
    if (project.kind !== "git" || here.kind !== "git" || !here.worktreeRoot) return null;
    if (here.worktreeRoot === project.worktreeRoot) return null;
    const rel = path.relative(project.root, here.worktreeRoot);
    const below = rel !== "" && !climbsOut(rel);
    const real = (dir?: string) => (dir ? realpathSync(dir) : undefined);
    const sameRepository = real(here.commonDir) === real(project.commonDir);
    return below || sameRepository ? here.worktreeRoot : null;
  } catch {
    return null; // not a directory, or git cannot read it: the project directory stays the workspace
  }
}

/** Said at a prompt of a session whose workspace was fixed before it moved into another work tree. */
export function otherWorkTreeMessage(workspace: string, workTree: string): string {
  return `this session's workspace is ${workspace}, fixed by its first event; its work in ${workTree} (another git work tree) is not snapshotted: start a new session there for undo`;
}

/**
 * What a prompt of a session fixed to `workspace` (its record's `fixed`, opened as `root`) must say
 * when the agent now runs where its work is not snapshotted: in another git work tree, or outside
 * the workspace altogether (`codex resume` run in another repository, or in a parent of the
 * directory the session began in). Null when its work there is snapshotted.
 */
export async function awayMessage(
  fixed: string,
  root: string,
  cwd: string | undefined,
): Promise<string | null> {
  const tree = await workTreeOfCwd(fixed, cwd);
  if (tree) return otherWorkTreeMessage(root, tree);
  if (!cwd) return null;
  let here: string;
  try {
    here = realpathSync(cwd);
  } catch {
    return null; // gone: nothing is written there
  }
  if (!climbsOut(path.relative(root, here))) return null;
  return `this session's workspace is ${root}, fixed by its first event; its work outside it (here, ${here}) is not snapshotted: start a new session here for undo`;
}
