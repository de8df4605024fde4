import { runGit, splitNul } from "../git/exec.js";
import type { StoreContext } from "../store/context.js";
import { listRemoteRefs, type ResolvedRemote, remoteNamespace } from "../store/remote.js";
import type { FetchReport } from "../types.js";

type Elsewhere = NonNullable<FetchReport["elsewhere"]>;

/**
 * The remote's sessions of other workspaces: each workspace path has a namespace of its own on the
 * remote (a hash of the folder's path), so a fetch at the repository's root brings nothing of a
 * subdirectory's sessions. Folders are named by matching the hashes against the folders HEAD
 * holds (the root included); a plain directory's, or a folder HEAD does not hold (or any folder,
 * from a plain directory), has `folder: null`; `of` says which of the two kinds it is. One more
 * listing of the remote's refs.
 */
export async function sessionsElsewhere(engine: StoreContext, remote: ResolvedRemote): Promise<Elsewhere> {
  const ours = remoteNamespace(engine.location);
  const counts = new Map<string, number>();
  for (const name of (await listRemoteRefs(engine.refs.refsGitDir, remote)).keys()) {
    const match = /^(refs\/ghostcommit\/[^/]+\/)sessions\/[^/]+$/.exec(name);
    if (match && match[1] !== ours) counts.set(match[1], (counts.get(match[1]) ?? 0) + 1);
  }
  if (counts.size === 0) return [];
  const folders = await foldersByNamespace(engine, new Set(counts.keys()));
  const plain = remoteNamespace({ ...engine.location, kind: "plain" });
  return [...counts]
    .map(([ns, sessions]) => ({
      folder: folders.get(ns) ?? null,
      sessions,
      of: ns === plain ? ("plain" as const) : ("repository" as const),
    }))
    .sort((a, b) => (a.folder ?? "\uffff").localeCompare(b.folder ?? "\uffff"));
}

/** The folders of HEAD (and the root, ".") whose namespace is among `wanted`. */
async function foldersByNamespace(engine: StoreContext, wanted: Set<string>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const { kind, worktreeRoot } = engine.location;
  if (kind !== "git" || !worktreeRoot) return found;
  const folderOf = (prefix: string, shown: string) => {
    const ns = remoteNamespace({ ...engine.location, prefix });
    if (wanted.has(ns)) found.set(ns, shown);
  };
  folderOf("", ".");
  const listed = await runGit(["ls-tree", "-r", "-d", "-z", "--name-only", "HEAD"], {
    cwd: worktreeRoot,
    okCodes: [0, 128], // no commit yet
  });
  if (listed.code !== 0) return found;
  for (const name of splitNul(listed.stdout)) {
    if (name.length > 0) folderOf(name.toString("latin1"), name.toString("utf8"));
  }
  return found;
}
