import { accessSync, constants, promises as fs, lstatSync, type Stats } from "node:fs";
import { fsPath, parentOf, type RelPath } from "../paths.js";
import type { PlanStep } from "./plan.js";
import { MODE } from "../git/objects.js";

/**
 * The permissions a restored file takes from the regular file it replaces (null: a new file keeps
 * the umask's). A snapshot holds only the executable bit, as git does; a `.env` or a key the user
 * made private (0600) must not come back readable by everyone (the umask's 0644), nor a file they
 * made read-only writable. The executable bit follows the snapshot: for those who could execute
 * the file before, else for those who can read it, and always its owner (git reads that bit).
 */
export function permissionsKept(replaced: Stats | null, mode: string): number | null {
  if (mode === MODE.link || !replaced?.isFile()) return null;
  const readWrite = replaced.mode & 0o666;
  const execute = mode === MODE.exec ? (replaced.mode & 0o111 || (readWrite & 0o444) >> 2) | 0o100 : 0;
  return readWrite | execute;
}

/**
 * Run as root (sudo) in another user's work tree, a written file keeps the owner of the file it
 * replaces, or takes its directory's: git leaves it root's, which its owner then cannot change.
 */
export async function keepOwner(temp: Buffer, replaced: Stats | null, dir: Buffer): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const owner = replaced ?? (await fs.lstat(dir).catch(() => null));
  if (!owner || (owner.uid === 0 && owner.gid === 0)) return;
  await fs.lchown(temp, owner.uid, owner.gid);
}

/**
 * Another user's regular file this process may not write: a restore leaves it as it is (a
 * `permission` skip), neither replaced nor deleted. The rename a restore writes by, and an unlink,
 * need only the directory's permission, and would make the file this user's, or take it away,
 * where an editor could not have saved it. Root keeps owners instead (keepOwner).
 */
function othersFile(stat: Stats | null, file: string | Buffer): boolean {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0 || !stat?.isFile() || stat.uid === uid) return false;
  try {
    accessSync(file, constants.W_OK);
    return false;
  } catch {
    return true;
  }
}

/**
 * The plan with each write or deletion this process may not make a `permission` skip (EACCES), as
 * the restore would find it, so a dry run's plan says so too: another user's file (see
 * othersFile), or one in a directory it may not write (the nearest that exists, for a new one).
 */
export function skipUnwritable(root: string, steps: PlanStep[]): PlanStep[] {
  if (process.getuid?.() === 0) return steps;
  const dirs = new Map<RelPath, boolean>();
  return steps.map((step) => {
    if (step.kind === "skip") return step;
    const file = fsPath(root, step.path);
    const stat = lstatSync(file, { throwIfNoEntry: false }) ?? null;
    const blocked = othersFile(stat, file) || !writableDir(root, parentOf(step.path), dirs);
    return blocked ? { kind: "skip", path: step.path, reason: "permission", errno: "EACCES" } : step;
  });
}

/** Whether the nearest existing directory at or above `dir` may be written (a symlink or a file there: the restore's own checks decide). */
function writableDir(root: string, dir: RelPath, known: Map<RelPath, boolean>): boolean {
  const cached = known.get(dir);
  if (cached !== undefined) return cached;
  const full = fsPath(root, dir);
  const stat = lstatSync(full, { throwIfNoEntry: false });
  let writable = true;
  if (!stat) writable = dir === "" || writableDir(root, parentOf(dir), known);
  else if (stat.isDirectory()) {
    try {
      accessSync(full, constants.W_OK | constants.X_OK);
    } catch {
      writable = false;
    }
  }
  known.set(dir, writable);
  return writable;
}

/** What stands where a file is written (null: nothing); another user's file is refused (EACCES), see othersFile. */
export async function replacedFile(file: Buffer): Promise<Stats | null> {
  const replaced = await fs.lstat(file).catch(() => null);
  if (othersFile(replaced, file)) {
    throw Object.assign(new Error(`another user's file: ${file}`), { code: "EACCES" });
  }
  return replaced;
}
