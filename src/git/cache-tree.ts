import { type IndexSummary, SHA1_BYTES } from "./index-entries.js";

/** One directory of the index's tree, as its cache says (see `indexSubtree`). */
export interface IndexSubtree {
  /** The tree id the directory's entries make. */
  oid: string;
  /** How many entries (files, symlinks, submodules) lie below it. */
  fileCount: number;
  /** The `.gitattributes` files below it, relative to it (one char per byte). */
  attributeFiles: string[];
  /** The `.ghostignore` files further below it, relative to it. */
  ghostignoreFiles: string[];
}

/**
 * What the index knows about the directory `prefix` (one char per byte; "" for the top) without
 * listing a tree: its cache tree (the "TREE" extension, which `git commit`, `checkout` and `clone`
 * keep) records each directory's tree id and entry count while the entries below it are unchanged
 * since. When that id is the tree a caller wants, the index's entries there are exactly that
 * tree's files: they are counted and searched for `.gitattributes` here, in milliseconds, instead
 * of by `git ls-tree -r` (as costly as a status on 100k files). Null where the cache does not
 * hold the directory, or for anything else not understood: conflicts, intent-to-add entries,
 * sparse or split indexes, damage.
 */
export function indexSubtree(index: IndexSummary | null, prefix: string): IndexSubtree | null {
  // Any of these would leave the cache invalid or its count different from the tree's.
  if (index === null || index.unusual || index.extensions.has("link") || index.extensions.has("sdir"))
    return null;
  const tree = index.cacheTree;
  if (!tree) return null;
  const components = prefix === "" ? [] : prefix.split("/").map((name) => Buffer.from(name, "latin1"));
  const node = cachedTreeAt(tree, 0, tree.length, components);
  if (!node) return null;
  const below = prefix === "" ? "" : `${prefix}/`;
  const inside = (names: string[]) =>
    names.filter((name) => name.startsWith(below)).map((name) => name.slice(below.length));
  return {
    ...node,
    attributeFiles: inside(index.attributeFiles),
    ghostignoreFiles: inside(index.ghostignoreFiles).filter((name) => name.includes("/")),
  };
}

/** The tree id the whole index makes, where its cache tree (a "TREE" body) holds it as valid. */
export function cacheTreeRoot(tree: Buffer): string | null {
  return cachedTreeAt(tree, 0, tree.length, [])?.oid ?? null;
}

/**
 * Finds a directory in a cache tree: each node is `name NUL count SP subtrees LF`, then its id
 * when `count` is not -1 (invalid), then its subtrees, depth first.
 */
function cachedTreeAt(
  data: Buffer,
  start: number,
  end: number,
  components: Buffer[],
): { oid: string; fileCount: number } | null {
  interface Node {
    name: [number, number];
    count: number;
    subtrees: number;
    oid: number | null;
    next: number;
  }
  const readNode = (at: number): Node | null => {
    const nul = data.indexOf(0, at);
    const lf = nul === -1 ? -1 : data.indexOf(0x0a, nul);
    if (nul === -1 || lf === -1 || lf >= end) return null;
    const [countText, subtreesText] = data.toString("latin1", nul + 1, lf).split(" ");
    if (!/^(-1|\d+)$/.test(countText) || !/^\d+$/.test(subtreesText ?? "")) return null;
    const count = Number(countText);
    const oid = count >= 0 ? lf + 1 : null;
    const next = lf + 1 + (count >= 0 ? SHA1_BYTES : 0);
    return next > end ? null : { name: [at, nul], count, subtrees: Number(subtreesText), oid, next };
  };
  // Where the node at `at` and all of its subtrees end.
  const skip = (at: number): number | null => {
    const node = readNode(at);
    if (!node) return null;
    let cursor: number | null = node.next;
    for (let i = 0; i < node.subtrees && cursor !== null; i++) cursor = skip(cursor);
    return cursor;
  };
  let node = readNode(start);
  for (const component of components) {
    if (!node) return null;
    let cursor: number | null = node.next;
    let child: Node | null = null;
    for (let i = 0; i < node.subtrees && cursor !== null; i++) {
      const candidate = readNode(cursor);
      if (!candidate) return null;
      if (data.compare(component, 0, component.length, candidate.name[0], candidate.name[1]) === 0) {
        child = candidate;
        break;
      }
      cursor = skip(cursor);
    }
    node = child;
  }
  if (!node || node.oid === null) return null;
  return { oid: data.toString("hex", node.oid, node.oid + SHA1_BYTES), fileCount: node.count };
}
