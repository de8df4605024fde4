import path from "node:path";
import { runGit } from "../git/exec.js";
import { indexSubtree } from "../git/cache-tree.js";
import type { SharedIndexWalk } from "../git/index-walk.js";
import type { RelPath } from "../paths.js";
import { STORE_FILES, readJson, writeFileAtomic } from "../store/layout.js";
import type { Ghostignore } from "./ghostignore.js";
import { ghostignoreMatch } from "./policy.js";

const GITLINK = Buffer.from("160000");
const ATTRIBUTES = Buffer.from(".gitattributes");

const GHOSTIGNORE = Buffer.from(".ghostignore");

/** Whether bytes [start, end) name a file `name` (at the top or in a directory). */
function endsWithName(buffer: Buffer, start: number, end: number, name: Buffer): boolean {
  const from = end - name.length;
  if (from < start || buffer.compare(name, 0, name.length, from, end) !== 0) return false;
  return from === start || buffer[from - 1] === 0x2f;
}

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
  /** Paths of `.ghostignore` files in the tree's directories (not its top's). */
  ghostignoreFiles: RelPath[];
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

/** The user's index, and where the base tree lies in it. */
export interface BaseIndex {
  walk: SharedIndexWalk;
  prefix: RelPath;
}

/**
 * Counts the files of a base tree and finds its .ghostignore matches. Listing a 100k-file tree
 * costs about as much as a status, so the answer is cached by tree id in the store; and where the
 * user's index still holds that tree untouched (its cache tree says so, as after a commit, a
 * checkout or a clone), the files are counted from the index instead of listing the tree.
 */
export async function baseInfo(
  storeDir: string,
  gitEnv: NodeJS.ProcessEnv,
  tree: string | null,
  ghostignore: Ghostignore | null,
  wantNames = false,
  index: BaseIndex | null = null,
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
      ghostignoreFiles: [],
    };
    if (wantNames) empty.names = [];
    return empty;
  }
  const cacheFile = path.join(storeDir, STORE_FILES.baseInfo);
  const cached = await readJson<BaseInfo | null>(cacheFile, null, isBaseInfoFile);
  if (
    cached &&
    cached.tree === tree &&
    cached.ghostignoreHash === hash &&
    Array.isArray(cached.attributeFiles) &&
    Array.isArray(cached.ghostignoreFiles) &&
    (!wantNames || Array.isArray(cached.names))
  ) {
    return cached;
  }
  // Names are only in the tree listing; .ghostignore matching wants every name too.
  const fromIndex = !wantNames && !ghostignore && index ? await infoFromIndex(index, tree, hash) : null;
  if (fromIndex) {
    await keep(cacheFile, fromIndex);
    return fromIndex;
  }
  // `--name-only` unless modes are needed: the listing of a 100k-file tree is the biggest thing a
  // snapshot ever reads, so it is scanned in place and names become strings only when kept.
  const args = wantNames ? ["ls-tree", "-r", "-z", tree] : ["ls-tree", "-r", "-z", "--name-only", tree];
  const output = (await runGit(args, { cwd: storeDir, env: gitEnv })).stdout;
  const info: BaseInfo = {
    tree,
    fileCount: 0,
    ghostignoreHash: hash,
    ghostignored: [],
    ghostignoredFiles: {},
    attributeFiles: [],
    ghostignoreFiles: [],
  };
  const fileNames: RelPath[] = []; // without submodules, which are never read from disk
  for (let start = 0; start < output.length; ) {
    let end = output.indexOf(0, start);
    if (end === -1) end = output.length;
    const nameStart = wantNames ? output.indexOf(0x09, start) + 1 : start;
    info.fileCount++;
    if (endsWithName(output, nameStart, end, ATTRIBUTES))
      info.attributeFiles.push(output.toString("latin1", nameStart, end));
    if (end - nameStart > GHOSTIGNORE.length && endsWithName(output, nameStart, end, GHOSTIGNORE))
      info.ghostignoreFiles.push(output.toString("latin1", nameStart, end));
    if (wantNames && !output.subarray(start, start + 6).equals(GITLINK)) {
      fileNames.push(output.toString("latin1", nameStart, end));
    }
    if (ghostignore) {
      const match = ghostignoreMatch(output.toString("latin1", nameStart, end), ghostignore.matcher);
      if (match) {
        if (!(match in info.ghostignoredFiles)) {
          info.ghostignored.push(match);
          info.ghostignoredFiles[match] = 0;
        }
        info.ghostignoredFiles[match]++;
      }
    }
    start = end + 1;
  }
  if (wantNames) info.names = fileNames;
  await keep(cacheFile, info);
  return info;
}

/** Caches the answer (unflushed: a file lost in a crash is only recomputed, never trusted damaged). */
async function keep(cacheFile: string, info: BaseInfo): Promise<void> {
  await writeFileAtomic(cacheFile, JSON.stringify(info), 0o600, false).catch(() => {});
}

/** The base info from the index's cache tree, when that holds `tree` at the prefix. */
async function infoFromIndex(index: BaseIndex, tree: string, hash: string | null): Promise<BaseInfo | null> {
  const subtree = indexSubtree(await index.walk.summary(), index.prefix);
  if (subtree?.oid !== tree) return null;
  return {
    tree,
    fileCount: subtree.fileCount,
    ghostignoreHash: hash,
    ghostignored: [],
    ghostignoredFiles: {},
    attributeFiles: subtree.attributeFiles,
    ghostignoreFiles: subtree.ghostignoreFiles,
  };
}
