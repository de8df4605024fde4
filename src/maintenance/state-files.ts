import { promises as fs } from "node:fs";
import path from "node:path";
import { isBaseInfoFile } from "../capture/base-info.js";
import { isProofCache } from "../capture/clean-proof.js";
import { isKnownDirs } from "../capture/ghostignore-dirs.js";
import { isCacheRow } from "../capture/hash-cache.js";
import { isBorrowState } from "../store/borrow.js";
import type { StoreContext } from "../store/context.js";
import { isPlainObject, STORE_FILES } from "../store/layout.js";

/**
 * The store's small state files: each is a cache or a note, so a damaged one is ignored by every
 * operation and reset by `doctor --repair`.
 */
export const STATE_FILES: Record<string, (value: unknown) => boolean> = {
  [STORE_FILES.hashCache]: (v) => isPlainObject(v) && Object.values(v).every(isCacheRow),
  [STORE_FILES.baseInfo]: isBaseInfoFile,
  [STORE_FILES.borrowed]: isBorrowState,
  [STORE_FILES.lastSafety]: (v) =>
    isPlainObject(v) && typeof v.id === "string" && /^[0-9a-f]{40}$/.test(v.id),
  [STORE_FILES.plainState]: (v) => isPlainObject(v) && Number.isFinite(v.files),
  [STORE_FILES.cleanProof]: isProofCache,
  [STORE_FILES.ghostignoreDirs]: isKnownDirs,
  [STORE_FILES.statusIndexSource]: isPlainObject,
};

/** State files that exist but are not valid JSON of their shape. */
export async function damagedStateFiles(engine: StoreContext): Promise<string[]> {
  const damaged: string[] = [];
  for (const [name, valid] of Object.entries(STATE_FILES)) {
    let text: string;
    try {
      text = await fs.readFile(path.join(engine.paths.dir, name), "utf8");
    } catch {
      continue; // absent is fine
    }
    let ok = false;
    try {
      ok = valid(JSON.parse(text));
    } catch {
      ok = false;
    }
    if (!ok) damaged.push(name);
  }
  return damaged;
}
