import { promises as fs } from "node:fs";
import path from "node:path";
import type { StoreKind } from "../config.js";
import type { StoreContext } from "./context.js";
import { readJson, STORE_FILES, writeFileAtomic } from "./layout.js";

/**
 * last-safety.json names the latest restore's way back, which gc keeps and doctor expects to find.
 * A repository's shadow store and its `--store repo` share one state directory, so the file keeps
 * one per store (judged from the other store, a safety snapshot looked lost: doctor called it gone
 * and `--repair` forgot it). `id` is the latest of all: every restore rewrites the file, which is
 * how a snapshot's status computed ahead learns that files changed meanwhile. A file with `id`
 * only (written before) counts for both stores.
 */
type LastSafetyFile = { id?: unknown } & Partial<Record<StoreKind, unknown>>;

const KINDS: readonly StoreKind[] = ["shadow", "repo"];
const isOid = (value: unknown): value is string => typeof value === "string" && /^[0-9a-f]{40}$/.test(value);

export async function readLastSafety(store: StoreContext): Promise<string | null> {
  const file = await readFile(store);
  const perStore = KINDS.some((kind) => kind in file) ? file[store.refs.kind] : file.id;
  return isOid(perStore) ? perStore : null;
}

export async function writeLastSafety(store: StoreContext, id: string): Promise<void> {
  const file = await readFile(store);
  const kept = Object.fromEntries(
    KINDS.filter((kind) => isOid(file[kind])).map((kind) => [kind, file[kind]]),
  );
  await writeFileAtomic(lastSafetyFile(store), JSON.stringify({ ...kept, id, [store.refs.kind]: id }));
}

/** Forgets this store's latest restore's way back if it is one of `ids` (whichever it is when omitted). */
export async function forgetLastSafety(store: StoreContext, ids?: readonly string[]): Promise<void> {
  const named = await readLastSafety(store);
  if (!named || (ids && !ids.includes(named))) return;
  const file = await readFile(store);
  const others = KINDS.filter((kind) => kind !== store.refs.kind && isOid(file[kind]));
  if (others.length === 0) {
    await fs.rm(lastSafetyFile(store), { force: true });
    return;
  }
  const kept = Object.fromEntries(others.map((kind) => [kind, file[kind]]));
  await writeFileAtomic(lastSafetyFile(store), JSON.stringify({ ...kept, id: file[others[0]] }));
}

function readFile(store: StoreContext): Promise<LastSafetyFile> {
  return readJson<LastSafetyFile>(lastSafetyFile(store), {});
}

function lastSafetyFile(store: StoreContext): string {
  return path.join(store.paths.dir, STORE_FILES.lastSafety);
}
