import path from "node:path";
import type { RelPath } from "../paths.js";
import { STORE_FILES, readJson, writeFileAtomic } from "../store/layout.js";

/** What a plain directory's capture remembers between snapshots, beside the store's index. */
export interface PlainState {
  ghostignoreHash: string | null;
  files: number;
  /** At least the bytes of the index's files: the budget walks the index only when near it. */
  bytes?: number;
  /** The tree the store's index held when it was last written. */
  indexTree?: string;
  /** Status saw a `.gitignore` in the directory: later snapshots walk it (see `listChanges`). */
  ignoreFiles?: boolean;
  /**
   * What the last snapshot held beside the index it left as it was (see `captureOverIndexTree`):
   * files it added, index files it left out. The budget keeps captured files before new ones.
   */
  addedOverIndex?: RelPath[];
  removedOverIndex?: RelPath[];
}

const isPathList = (v: unknown) =>
  v === undefined || (Array.isArray(v) && v.every((p) => typeof p === "string"));

export async function readState(dir: string): Promise<PlainState> {
  const fallback: PlainState = { ghostignoreHash: null, files: 0 };
  // A damaged state file (wrong types) must not push every file over the budget.
  return readJson<PlainState>(path.join(dir, STORE_FILES.plainState), fallback, (value) => {
    const v = value as PlainState | null;
    return (
      typeof v === "object" &&
      v !== null &&
      (v.ghostignoreHash === null || typeof v.ghostignoreHash === "string") &&
      Number.isFinite(v.files) &&
      (v.bytes === undefined || (Number.isFinite(v.bytes) && v.bytes >= 0)) &&
      (v.indexTree === undefined || /^[0-9a-f]{40}$/.test(v.indexTree)) &&
      (v.ignoreFiles === undefined || typeof v.ignoreFiles === "boolean") &&
      isPathList(v.addedOverIndex) &&
      isPathList(v.removedOverIndex)
    );
  });
}

export async function writeState(dir: string, state: PlainState): Promise<void> {
  await writeFileAtomic(path.join(dir, STORE_FILES.plainState), JSON.stringify(state));
}
