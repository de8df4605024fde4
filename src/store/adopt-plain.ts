import { existsSync, promises as fs, linkSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import { plainLocation, type WorkspaceLocation } from "../git/repository.js";
import { STORE_FILES, type StorePaths, storePaths } from "./layout.js";
import { SHADOW_SNAPSHOT_REFS } from "./store.js";

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
 * (`staging` is its git directory, not yet in place): every snapshot (its objects hard-linked, as
 * git never changes an object file in place, and its refs), the session journals and the
 * protection of the latest safety snapshot. The session an agent was in when it ran `git init`
 * keeps its turns, and a turn open across it ends here. The plain store is left as it was (the
 * folder opens it again if its `.git` is removed). The open turn's progress marks, trees no ref
 * names, come along with the linked objects (not through the fetch used where links are refused:
 * its edits after an interrupt then count as uncertain).
 */
export async function adoptPlainHistory(
  staging: string,
  paths: StorePaths,
  plain: StorePaths,
): Promise<void> {
  const refs = await runGit(["for-each-ref", "--format=%(objectname) %(refname)", SHADOW_SNAPSHOT_REFS], {
    cwd: plain.dir,
    env: { GIT_DIR: plain.gitDir },
  });
  const lines = refs.stdout.toString("latin1").split("\n").filter(Boolean).sort(byRefName);
  try {
    linkObjects(plain.objectsDir, path.join(staging, "objects"));
  } catch {
    // Links refused (another file system, a file system without them): a local fetch copies.
    await runGit(
      [
        "fetch",
        "-q",
        "--no-tags",
        "--no-write-fetch-head",
        plain.gitDir,
        `+${SHADOW_SNAPSHOT_REFS}*:${SHADOW_SNAPSHOT_REFS}*`,
      ],
      {
        cwd: paths.dir,
        env: { GIT_DIR: staging },
      },
    );
  }
  // The refs as git packs them: sorted, one line each (commits: nothing to peel).
  writeFileSync(
    path.join(staging, "packed-refs"),
    `# pack-refs with: peeled fully-peeled sorted \n${lines.map((line) => `${line}\n`).join("")}`,
    { mode: 0o600 },
  );
  mkdirSync(paths.sessionsDir, { recursive: true, mode: 0o700 });
  const journals = (await fs.readdir(plain.sessionsDir).catch(() => [] as string[])).filter((name) =>
    name.endsWith(".jsonl"),
  );
  const copies = [
    ...journals.map((name) => [path.join(plain.sessionsDir, name), path.join(paths.sessionsDir, name)]),
    [path.join(plain.dir, STORE_FILES.lastSafety), path.join(paths.dir, STORE_FILES.lastSafety)],
  ];
  for (const [from, to] of copies) await copyWhole(from, to);
}

/**
 * Copies `from` to `to` unless `to` exists: through a temp name linked into place, so a copy cut
 * off (a kill, a full disk) never leaves a part of a journal where the next run would take it for
 * the whole (the next run makes the store again and copies it whole). A process racing to make
 * the same store copies the same files: the first copy stands.
 */
async function copyWhole(from: string, to: string): Promise<void> {
  const temp = `${to}.${process.pid}.tmp`;
  try {
    await fs.copyFile(from, temp);
    await fs.link(temp, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST" && code !== "ENOENT") throw error;
  } finally {
    await fs.rm(temp, { force: true });
  }
}

function byRefName(a: string, b: string): number {
  const [nameA, nameB] = [a.slice(a.indexOf(" ") + 1), b.slice(b.indexOf(" ") + 1)];
  return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
}

/** Hard-links every pack and loose object file of `from` into `to` (an object directory). */
function linkObjects(from: string, to: string): void {
  for (const dir of readdirSync(from)) {
    const isPack = dir === "pack";
    if (!isPack && !/^[0-9a-f]{2}$/.test(dir)) continue;
    const target = path.join(to, dir);
    mkdirSync(target, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(path.join(from, dir))) {
      if (isPack ? !/^pack-[0-9a-f]+\.(pack|idx|rev)$/.test(name) : !/^[0-9a-f]{38}$/.test(name)) continue;
      try {
        linkSync(path.join(from, dir, name), path.join(target, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
  }
}
