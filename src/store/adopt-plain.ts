import { constants, existsSync, promises as fs, mkdirSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import { plainLocation, type WorkspaceLocation } from "../git/repository.js";
import { STORE_FILES, type StorePaths, storePaths } from "./layout.js";

/**
 * The store a folder had while it was not a git repository, or null. A store is keyed by its
 * workspace's git directory too, so a folder the agent ran `git init` in gets a new one.
 */
export function plainStoreOf(location: WorkspaceLocation): StorePaths | null {
  if (location.kind !== "git") return null;
  const plain = storePaths(plainLocation(location.root));
  return existsSync(path.join(plain.gitDir, "HEAD")) ? plain : null;
}

/**
 * Brings the history of the folder's plain store into its new git store as that store is made
 * (`staging` is its git directory, not yet in place): every snapshot (one local fetch of their
 * refs, which copies the objects the repository does not hold), the session journals and the
 * protection of the latest safety snapshot. The session an agent was in when it ran `git init`
 * keeps its turns, and a turn open across it ends here. The plain store is left as it was (the
 * folder opens it again if its `.git` is removed). Progress marks are trees no ref names: an
 * interrupted turn's marks stay behind, so its edits after the interrupt count as uncertain.
 */
export async function adoptPlainHistory(
  staging: string,
  paths: StorePaths,
  plain: StorePaths,
): Promise<void> {
  await runGit(
    [
      "fetch",
      "-q",
      "--no-tags",
      "--no-write-fetch-head",
      plain.gitDir,
      "+refs/ghostcommit/snapshots/*:refs/ghostcommit/snapshots/*",
    ],
    { cwd: paths.dir, env: { GIT_DIR: staging } },
  );
  mkdirSync(paths.sessionsDir, { recursive: true, mode: 0o700 });
  const journals = (await fs.readdir(plain.sessionsDir).catch(() => [] as string[])).filter((name) =>
    name.endsWith(".jsonl"),
  );
  const copies = [
    ...journals.map((name) => [path.join(plain.sessionsDir, name), path.join(paths.sessionsDir, name)]),
    [path.join(plain.dir, STORE_FILES.lastSafety), path.join(paths.dir, STORE_FILES.lastSafety)],
  ];
  for (const [from, to] of copies) {
    // A process racing to make the same store copies the same files: the first copy stands.
    await fs.copyFile(from, to, constants.COPYFILE_EXCL).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST" && error.code !== "ENOENT") throw error;
    });
  }
}
