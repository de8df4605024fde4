import type { CatFile } from "./cat-file.js";
import {
  EMPTY_TREE,
  hexIdOf,
  MODE,
  parseTree,
  serializeTree,
  type TreeEntry,
  treeOfCommit,
} from "./objects.js";
import type { LooseObjectWriter } from "./loose-objects.js";
import { readLooseObject } from "./loose-read.js";
import type { RelPath } from "../paths.js";

/** A file's state in a tree: mode and blob (or gitlink) id. */
export interface FileState {
  mode: string;
  oid: string;
}

/** Path → new state, or null to remove it. */
export type TreeChanges = Map<RelPath, FileState | null>;

interface DirNode {
  files: Map<string, FileState | null>;
  dirs: Map<string, DirNode>;
}

function newNode(): DirNode {
  return { files: new Map(), dirs: new Map() };
}

/**
 * Builds a new tree from `base` plus `changes`, reading and writing only the directories on the
 * changed paths: the cost follows the number of changes, not the size of the tree.
 */
export async function editTree(
  cat: CatFile,
  writer: LooseObjectWriter,
  base: string | null,
  changes: TreeChanges,
): Promise<string> {
  const root = newNode();
  for (const [path, state] of changes) {
    const parts = path.split("/");
    let node = root;
    for (const part of parts.slice(0, -1)) {
      let child = node.dirs.get(part);
      if (!child) {
        child = newNode();
        node.dirs.set(part, child);
      }
      node = child;
    }
    node.files.set(parts[parts.length - 1], state);
  }
  const result = await buildNode(cat, writer, base, root);
  return result ?? (await writer.write("tree", serializeTree([])));
}

async function buildNode(
  cat: CatFile,
  writer: LooseObjectWriter,
  base: string | null,
  node: DirNode,
): Promise<string | null> {
  const entries = new Map<string, TreeEntry>();
  if (base) {
    // Ids left as bytes: only those of the entries on changed paths are looked at (`hexIdOf`).
    for (const entry of parseTree(await cat.readExpect(base, "tree"), { hexIds: false }))
      entries.set(entry.name, entry);
  }
  let changed = false;
  for (const [name, state] of node.files) {
    const before = entries.get(name);
    if (node.dirs.has(name)) continue; // decided below, with the directory of the same name
    if (state === null) {
      if (before) {
        entries.delete(name);
        changed = true;
      }
    } else if (!before || before.mode !== state.mode || hexIdOf(before) !== state.oid) {
      entries.set(name, { name, mode: state.mode, oid: state.oid });
      changed = true;
    }
  }
  // Subdirectories are built concurrently: their tree reads are pipelined through one cat-file,
  // so the wait grows with the depth of the changes, not their number.
  const built = await Promise.all(
    [...node.dirs].map(async ([name, child]) => {
      const before = entries.get(name);
      // A name is a file or a directory, never both. A file state for it means a non-directory
      // stands there (as when a directory was replaced by a file or a symlink), so nothing below
      // it can exist, whatever index entries git could not check say (e.g. below a symlink loop).
      if (node.files.get(name)) return { name, oid: undefined };
      const childBase = before && before.mode === MODE.tree ? hexIdOf(before) : null;
      return { name, oid: await buildNode(cat, writer, childBase, child) };
    }),
  );
  for (const { name, oid } of built) {
    const before = entries.get(name);
    const file = node.files.get(name) ?? null;
    if (file) {
      if (!before || before.mode !== file.mode || hexIdOf(before) !== file.oid) {
        entries.set(name, { name, mode: file.mode, oid: file.oid });
        changed = true;
      }
      continue;
    }
    if (oid === null || oid === undefined) {
      if (before) {
        entries.delete(name);
        changed = true;
      }
    } else if (!before || hexIdOf(before) !== oid || before.mode !== MODE.tree) {
      entries.set(name, { name, mode: MODE.tree, oid });
      changed = true;
    }
  }
  if (entries.size === 0) return null;
  if (!changed && base) return base;
  return writer.write("tree", serializeTree([...entries.values()]));
}

/** The tree at `dir` inside `tree` (null if absent or not a directory). */
export async function subtreeAt(cat: CatFile, tree: string | null, dir: RelPath): Promise<string | null> {
  let current = tree;
  if (dir === "") return current;
  for (const part of dir.split("/")) {
    if (!current) return null;
    const entry = parseTree(await cat.readExpect(current, "tree")).find((e) => e.name === part);
    current = entry && entry.mode === MODE.tree ? entry.oid : null;
  }
  return current;
}

/** How many files (and links, gitlinks) a tree holds, at any depth. */
export async function filesBelow(cat: CatFile, tree: string): Promise<number> {
  let count = 0;
  for (const entry of parseTree(await cat.readExpect(tree, "tree")))
    count += entry.mode === MODE.tree ? await filesBelow(cat, entry.oid) : 1;
  return count;
}

/** The entry at `path` inside `tree`, or null. */
export async function entryAt(cat: CatFile, tree: string | null, path: RelPath): Promise<TreeEntry | null> {
  const slash = path.lastIndexOf("/");
  const dirTree = await subtreeAt(cat, tree, slash === -1 ? "" : path.slice(0, slash));
  if (!dirTree) return null;
  const name = slash === -1 ? path : path.slice(slash + 1);
  return parseTree(await cat.readExpect(dirTree, "tree")).find((e) => e.name === name) ?? null;
}

/** The root tree of a commit. */
export async function commitTree(cat: CatFile, commit: string): Promise<string> {
  return treeOfCommit(await cat.readExpect(commit, "commit")) ?? EMPTY_TREE;
}

/**
 * The root tree of a commit, read from `objectsDir` where it is stored loose (a snapshot's
 * commit, until a repack) and otherwise asked of git: a command that needs no other object is
 * spared starting `cat-file`.
 */
export async function commitTreeFrom(objectsDir: string, cat: CatFile, commit: string): Promise<string> {
  const body = readLooseObject(objectsDir, commit, "commit");
  return body === null ? commitTree(cat, commit) : (treeOfCommit(body) ?? EMPTY_TREE);
}
