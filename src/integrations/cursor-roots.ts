import { realpathSync } from "node:fs";
import path from "node:path";
import { appendHookLog, globalHookLog, type HookLogEntry } from "../maintenance/hook-log.js";

/**
 * A multi-root Cursor workspace sends all its folders in `workspace_roots`; a session's workspace
 * is the first, so the others have no undo. Nothing Cursor shows can say so (its answers carry no
 * message), so it goes where `doctor` looks: the first folder's hook log, and the global log under
 * each other folder, which `doctor` run there reports.
 */
type Base = Omit<HookLogEntry, "t" | "level" | "message" | "dir">;

function spellings(dir: string): string[] {
  try {
    return [path.resolve(dir), realpathSync(dir)];
  } catch {
    return [path.resolve(dir)];
  }
}

function inside(root: string, file: string): boolean {
  return spellings(root).some((top) => {
    const rel = path.relative(top, file);
    return rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
  });
}

/** Of a Cursor workspace's other folders, those the workspace at `root` does not hold. */
export function foldersLeftOut(root: string, others: string[]): string[] {
  return others.filter((other) => !spellings(other).some((o) => inside(root, o)));
}

const openAlone = "open it as a workspace of its own for undo there";

/** Logs that the folders of the workspace other than the first (`root`) are not snapshotted. */
export async function logFoldersLeftOut(root: string, logFile: string, base: Base, others: string[]) {
  const left = foldersLeftOut(root, others);
  if (left.length === 0) return;
  await appendHookLog(logFile, {
    ...base,
    dir: root,
    level: "error",
    message: `not snapshotted: ${left.join(", ")}: ghostcommit snapshots only the first folder of a Cursor workspace, ${root}, so edits in its other folders have no undo (${openAlone})`,
  });
  for (const dir of left) {
    await appendHookLog(globalHookLog, {
      ...base,
      dir,
      loggedIn: root,
      level: "error",
      message: `not snapshotted: ${dir} is not the first folder of its Cursor workspace (${root} is), and ghostcommit snapshots only the first, so edits here have no undo (${openAlone})`,
    });
  }
}

/** Logs an edit of `given` (relative to `base`'s directory: `from`) outside the workspace at `root`. */
export async function logNotRecorded(
  root: string,
  logFile: string,
  base: Base,
  where: { given: string; from: string; others: string[] },
) {
  const file = path.resolve(where.from, where.given);
  const folder = foldersLeftOut(root, where.others).find((dir) =>
    spellings(dir).some((d) => inside(d, file)),
  );
  const message = folder
    ? `not recorded: ${file} is in ${folder}, a folder of this Cursor workspace other than the first (${root}), which ghostcommit does not snapshot`
    : `not recorded: a path outside the workspace ${root}: ${file}`;
  await appendHookLog(logFile, { ...base, dir: root, level: "error", message });
  if (folder)
    await appendHookLog(globalHookLog, { ...base, dir: folder, loggedIn: root, level: "error", message });
}
