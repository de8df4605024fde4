import path from "node:path";
import { runGit, splitNul } from "../git/exec.js";
import { type RelPath, relFromBytes } from "../paths.js";
import { readJson, writeFileAtomic } from "../store/layout.js";
import type { Ghostignore } from "./ghostignore.js";
import { ghostignoreMatch } from "./policy.js";

const GITLINK = Buffer.from("160000");

/** What ghostcommit needs to know about the whole base tree, computed once per base tree. */
export interface BaseInfo {
  tree: string;
  fileCount: number;
  ghostignoreHash: string | null;
  /** Tracked paths matched by .ghostignore (outermost matched directory, or the file). */
  ghostignored: RelPath[];
  ghostignoredFiles: Record<RelPath, number>;
  /** Paths of `.gitattributes` files in the tree. */
  attributeFiles: RelPath[];
  /** Every file path (submodules aside), kept only when asked for (content conversion makes ghostcommit check each file). */
  names?: RelPath[];
}

/** A cached BaseInfo of the right shape (a damaged cache file is recomputed, never trusted). */
export function isBaseInfoFile(value: unknown): boolean {
  const v = value as BaseInfo | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.tree === "string" &&
    Number.isInteger(v.fileCount) &&
    v.fileCount >= 0 &&
    (v.ghostignoreHash === null || typeof v.ghostignoreHash === "string") &&
    Array.isArray(v.ghostignored) &&
    v.ghostignored.every((p) => typeof p === "string" && Number.isInteger(v.ghostignoredFiles?.[p]))
  );
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
  wantNames = false,
): Promise<BaseInfo> {
  const hash = ghostignore?.hash ?? null;
  if (!tree) {
    const empty: BaseInfo = {
      tree: "",
      fileCount: 0,
      ghostignoreHash: hash,
      ghostignored: [],
      ghostignoredFiles: {},
      attributeFiles: [],
    };
    if (wantNames) empty.names = [];
    return empty;
  }
  const cacheFile = path.join(storeDir, "base-info.json");
  const cached = await readJson<BaseInfo | null>(cacheFile, null, isBaseInfoFile);
  if (
    cached &&
    cached.tree === tree &&
    cached.ghostignoreHash === hash &&
    Array.isArray(cached.attributeFiles) &&
    (!wantNames || Array.isArray(cached.names))
  ) {
    return cached;
  }
  const result = await runGit(["ls-tree", "-r", "-z", tree], { cwd: storeDir, env: gitEnv });
  const records = splitNul(result.stdout);
  const names: Buffer[] = [];
  const fileNames: Buffer[] = []; // without submodules, which are never read from disk
  for (const record of records) {
    const tab = record.indexOf(0x09);
    const name = record.subarray(tab + 1);
    names.push(name);
    if (!record.subarray(0, 6).equals(GITLINK)) fileNames.push(name);
  }
  const info: BaseInfo = {
    tree,
    fileCount: names.length,
    ghostignoreHash: hash,
    ghostignored: [],
    ghostignoredFiles: {},
    attributeFiles: [],
  };
  const all = names.map(relFromBytes);
  info.attributeFiles = all.filter((rel) => rel === ".gitattributes" || rel.endsWith("/.gitattributes"));
  if (wantNames) info.names = fileNames.map(relFromBytes);
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
