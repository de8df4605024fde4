import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { type RelPath, relFromBytes } from "../paths.js";
import { readJson, writeFileAtomic } from "../store/layout.js";
import type { Ghostignore } from "./ghostignore.js";
import { ghostignoreMatch } from "./policy.js";

/** What ghostcommit needs to know about the whole base tree, computed once per base tree. */
export interface BaseInfo {
  tree: string;
  fileCount: number;
  ghostignoreHash: string | null;
  /** Tracked paths matched by .ghostignore (outermost matched directory, or the file). */
  ghostignored: RelPath[];
  ghostignoredFiles: Record<RelPath, number>;
}

/**
 * Counts the files of a base tree and finds its .ghostignore matches. Listing a 100k-file tree
 * costs about as much as a status, so the answer is cached by tree id in the store.
 */
export async function baseInfo(
  storeDir: string,
  gitEnv: NodeJS.ProcessEnv,
  tree: string | null,
  ghostignore: Ghostignore | null,
): Promise<BaseInfo> {
  const hash = ghostignore?.hash ?? null;
  if (!tree)
    return { tree: "", fileCount: 0, ghostignoreHash: hash, ghostignored: [], ghostignoredFiles: {} };
  const cacheFile = path.join(storeDir, "base-info.json");
  const cached = await readJson<BaseInfo | null>(cacheFile, null);
  if (cached && cached.tree === tree && cached.ghostignoreHash === hash) return cached;
  const result = await runGit(["ls-tree", "-r", "-z", "--name-only", tree], { cwd: storeDir, env: gitEnv });
  const names = splitNul(result.stdout);
  const info: BaseInfo = {
    tree,
    fileCount: names.length,
    ghostignoreHash: hash,
    ghostignored: [],
    ghostignoredFiles: {},
  };
  if (ghostignore) {
    for (const name of names) {
      const rel = relFromBytes(name);
      const match = ghostignoreMatch(rel, ghostignore.matcher);
      if (!match) continue;
      if (!(match in info.ghostignoredFiles)) {
        info.ghostignored.push(match);
        info.ghostignoredFiles[match] = 0;
      }
      info.ghostignoredFiles[match]++;
    }
  }
  await writeFileAtomic(cacheFile, JSON.stringify(info)).catch(() => {});
  return info;
}
