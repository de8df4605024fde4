import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import type { StoreContext } from "../store/context.js";
import { workspaceDir } from "../store/layout.js";
import { shellWord } from "../util/shell.js";
import type { DoctorCheck } from "./doctor.js";

/** A repository-store workspace's refs: `refs/ghostcommit/<key>/…`, its key a 20-digit hash. */
const KEYED = /^refs\/ghostcommit\/([0-9a-f]{20})\//;

/**
 * Doctor check: repository-store snapshots of a workspace that is gone (a worktree removed with
 * `git worktree remove`, a directory moved or deleted). Their refs stay in the repository that
 * every worktree shares, shown by `git log --all` and keeping their objects from git's gc, and no
 * command reaches them any more. Named with the command that removes them, not removed: moving the
 * directory back finds them again. Only workspaces this data directory knows (by the
 * `workspace.json` it keeps for each) are judged.
 */
export const checkGoneWorkspaceRefs: DoctorCheck = async (engine: StoreContext) => {
  const { commonDir, key } = engine.location;
  if (!commonDir) return [];
  const listed = await runGit(["for-each-ref", "--format=%(refname)", "refs/ghostcommit/"], {
    cwd: engine.root,
    env: { GIT_DIR: commonDir },
    okCodes: [0, 128],
  }).catch(() => null);
  if (listed?.code !== 0) return [];
  const counts = new Map<string, number>();
  for (const ref of listed.stdout.toString("utf8").split("\n")) {
    const other = KEYED.exec(ref)?.[1];
    const snapshot = ref.includes("/snapshots/") ? 1 : 0; // besides its sessions' refs
    if (other && other !== key) counts.set(other, (counts.get(other) ?? 0) + snapshot);
  }
  return [...counts].flatMap(([other, snapshots]) => {
    const gone = goneWorkspace(other);
    if (!gone) return [];
    const prefix = `refs/ghostcommit/${other}/`;
    const remove = `git for-each-ref --format='delete %(refname)' ${prefix} | git update-ref --stdin`;
    return [
      {
        code: "gone-workspace-refs" as const,
        message: `${prefix} keeps ${snapshots} ${snapshots === 1 ? "snapshot" : "snapshots"} (repository store) of ${shellWord(gone)}, which is gone (a removed worktree, or a directory moved or deleted): \`${remove}\` removes its refs, and your next git gc their objects (or move the directory back)`,
      },
    ];
  });
};

/** The directory a workspace key served, when this data directory knows it and it is gone. */
function goneWorkspace(key: string): string | null {
  let record: { root?: unknown; gitDir?: unknown };
  try {
    record = JSON.parse(readFileSync(path.join(workspaceDir(key), "workspace.json"), "utf8"));
  } catch {
    return null; // another machine's or user's, or a data directory reset since: not judged
  }
  if (typeof record.root !== "string") return null;
  const gitDirGone = typeof record.gitDir === "string" && !existsSync(record.gitDir);
  return !existsSync(record.root) || gitDirGone ? record.root : null;
}
