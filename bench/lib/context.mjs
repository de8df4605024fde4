// Per-tree state shared by the cases: the tree, its env, and edits that never repeat content.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { editedContent, filePath, modifiedIndexes, newFiles } from "./generate.mjs";

/** Size of content as git stores it loose: zlib of "blob <n>\0" + bytes. */
export function compressedSize(buffers) {
  let sum = 0;
  for (const b of buffers) sum += deflateSync(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b])).length;
  return sum;
}

export function makeContext(spec, root, env, scratch) {
  let version = 0;
  const edited = modifiedIndexes(spec);
  const editedPaths = edited.map((i) => filePath(spec, i));
  return {
    spec,
    root,
    env,
    scratch,
    editedPaths,
    /** Rewrites the edited files with content no earlier run wrote; returns that content. */
    mutate() {
      version++;
      return edited.map((i) => {
        const content = editedContent(spec, i, version);
        writeFileSync(path.join(root, filePath(spec, i)), content);
        return content;
      });
    },
    /** What differs from HEAD now: the edited files and the new files. */
    changedContent() {
      return [
        ...editedPaths.map((p) => readFileSync(path.join(root, p))),
        ...newFiles(spec).map((f) => f.content),
      ];
    },
    tempDir(prefix) {
      return mkdtempSync(path.join(scratch, prefix));
    },
  };
}
