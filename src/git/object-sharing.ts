import { chmodSync, chownSync, type Stats } from "node:fs";

/**
 * How objects written into a repository's own objects directory (the repo store) must be made so
 * that its owner and group keep using it as git would leave it:
 * - a shared repository (`core.sharedRepository`: git made the objects directory group-writable
 *   or setgid) gets fan-out directories as that directory is, and objects readable by whoever
 *   may read it, whatever the umask, as git's own adjustment of shared permissions gives;
 * - root writing into another user's repository gives what it makes to that user, as git run by
 *   that user would have made it (otherwise the user's own git could not add objects beside it).
 * Null when there is nothing to adjust: the usual case, which then costs nothing.
 */
export interface ObjectSharing {
  dirMode: number | null;
  fileMode: number | null;
  owner: { uid: number; gid: number } | null;
}

export function objectSharing(objectsDir: Stats): ObjectSharing | null {
  const shared = (objectsDir.mode & 0o2020) !== 0;
  const foreign = process.getuid?.() === 0 && objectsDir.uid !== 0;
  if (!shared && !foreign) return null;
  return {
    dirMode: shared ? objectsDir.mode & 0o7777 : null,
    fileMode: shared ? 0o400 | (objectsDir.mode & 0o044) : null,
    owner: foreign ? { uid: objectsDir.uid, gid: objectsDir.gid } : null,
  };
}

/** Makes a directory or file just created as `sharing` says. */
export function adopt(sharing: ObjectSharing | null, path: string, kind: "dir" | "file"): void {
  if (!sharing) return;
  const mode = kind === "dir" ? sharing.dirMode : sharing.fileMode;
  if (sharing.owner) chownSync(path, sharing.owner.uid, sharing.owner.gid);
  if (mode !== null) chmodSync(path, mode); // after chown, which clears the setgid bit
}
