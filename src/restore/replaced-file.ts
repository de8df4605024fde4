import { constants, promises as fs, type Stats } from "node:fs";
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
 * What stands where a file is written (null: nothing). Another user's file this process may not
 * write is refused (EACCES, a `permission` skip): the rename a restore writes by needs only the
 * directory's permission, and would make the file this user's where an editor could not have
 * saved it. Root keeps owners instead (keepOwner).
 */
export async function replacedFile(file: Buffer): Promise<Stats | null> {
  const replaced = await fs.lstat(file).catch(() => null);
  const uid = process.getuid?.();
  if (uid !== undefined && uid !== 0 && replaced?.isFile() && replaced.uid !== uid)
    await fs.access(file, constants.W_OK);
  return replaced;
}
