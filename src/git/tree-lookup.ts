import type { FileState } from "./trees.js";
import type { CatFile } from "./cat-file.js";
import { MODE, parseTree, type TreeEntry } from "./objects.js";
import { displayPath, type RelPath, SHOWN_REPLACEMENT } from "../paths.js";

/**
 * Looks paths up in snapshot trees, reading each directory object once: snapshots of one
 * workspace share most subtrees, so many paths across many turns cost few reads.
 */
export class TreeLookup {
  private readonly dirs = new Map<string, Map<string, TreeEntry>>();

  constructor(private readonly cat: CatFile) {}

  private async dir(oid: string): Promise<Map<string, TreeEntry>> {
    let entries = this.dirs.get(oid);
    if (!entries) {
      entries = new Map(parseTree(await this.cat.readExpect(oid, "tree")).map((e) => [e.name, e]));
      this.dirs.set(oid, entries);
    }
    return entries;
  }

  /** The entry at `path` in `tree` (file, link, gitlink or directory), or null. */
  async entry(tree: string, path: RelPath): Promise<TreeEntry | null> {
    let current = tree;
    const parts = path.split("/");
    for (let i = 0; i < parts.length; i++) {
      const entry = (await this.dir(current)).get(parts[i]);
      if (!entry) return null;
      if (i === parts.length - 1) return entry;
      if (entry.mode !== MODE.tree) return null;
      current = entry.oid;
    }
    return null;
  }

  /** The file state at `path` (null when absent or a directory). */
  async file(tree: string, path: RelPath): Promise<FileState | null> {
    const entry = await this.entry(tree, path);
    return entry && entry.mode !== MODE.tree ? { mode: entry.mode, oid: entry.oid } : null;
  }

  /**
   * The paths in `tree` that read as `path` does once shown (`displayPath`): a name that is not
   * UTF-8 shows U+FFFD where its bytes are not, and a person or a program given only what was
   * shown can name it no other way.
   */
  async shownAs(tree: string, path: RelPath): Promise<RelPath[]> {
    const parts = path.split("/");
    const found: RelPath[] = [];
    const walk = async (oid: string, i: number, prefix: RelPath): Promise<void> => {
      const entries = await this.dir(oid);
      const shown = displayPath(parts[i]);
      const matches = parts[i].includes(SHOWN_REPLACEMENT)
        ? [...entries.values()].filter((e) => displayPath(e.name) === shown)
        : [entries.get(parts[i])].filter((e) => e !== undefined);
      for (const e of matches) {
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        if (i === parts.length - 1) found.push(rel);
        else if (e.mode === MODE.tree) await walk(e.oid, i + 1, rel);
      }
    };
    await walk(tree, 0, "");
    return found;
  }

  /** Every file, link and gitlink below `path` in `tree`, by path; none when it is no directory there. */
  async filesBelow(tree: string, path: RelPath): Promise<Map<RelPath, FileState>> {
    const out = new Map<RelPath, FileState>();
    const entry = await this.entry(tree, path);
    if (entry?.mode !== MODE.tree) return out;
    const walk = async (oid: string, prefix: RelPath): Promise<void> => {
      for (const e of (await this.dir(oid)).values()) {
        const rel = `${prefix}/${e.name}`;
        if (e.mode === MODE.tree) await walk(e.oid, rel);
        else out.set(rel, { mode: e.mode, oid: e.oid });
      }
    };
    await walk(entry.oid, path);
    return out;
  }
}

/** True when two file states are the same content and mode (both absent counts as equal). */
export function sameState(a: FileState | null, b: FileState | null): boolean {
  if (a === null || b === null) return a === b;
  return a.mode === b.mode && a.oid === b.oid;
}
