import { fsError } from "../errors.js";
import { randomHex } from "../util/crypto.js";
import { promises as fs, rmdirSync, rmSync } from "node:fs";
import path from "node:path";
import { readOptional } from "../git/repository.js";
import { type StorePaths, writeFileAtomic } from "../store/layout.js";
import { FSMONITOR_ANSWER_FILE } from "./fsmonitor-answer.js";
import { discardStatusAhead, makeGitDir } from "./status-ahead.js";

/**
 * The git directory a status runs from: a throw-away one per run, sharing the store's (its
 * config, attributes and objects), with the user's `info/exclude` mirrored into the store.
 */

/**
 * A git directory for one status: it shares the store's git directory (`commondir`: config,
 * attributes, objects, refs) and has a HEAD of its own (`head`: an id or `ref: …`). Removed by
 * `removeThrowawayGitDir`.
 */
export async function throwawayGitDir(
  paths: Pick<StorePaths, "tmpDir" | "gitDir">,
  head: string,
): Promise<string> {
  // Synchronously: seven thread-pool trips otherwise, just before status starts.
  try {
    return makeGitDir(paths.tmpDir, paths.gitDir, head, randomHex(4));
  } catch (error) {
    throw fsError(error, "create a temporary git directory in", paths.tmpDir);
  }
}

/**
 * The two files it was made with and the directory, with three synchronous calls: a recursive
 * removal through the thread pool (a module to load, five round trips, which the clean proof's
 * reads may be holding) took up to 20 ms of a first snapshot's critical path. Anything else git
 * left in it is removed in the background, not waited for; one killed first leaves it to the
 * next capture's leftover sweep.
 */
export function removeThrowawayGitDir(dir: string): void {
  try {
    for (const name of ["HEAD", "commondir", FSMONITOR_ANSWER_FILE])
      rmSync(path.join(dir, name), { force: true });
    rmdirSync(dir);
  } catch {
    fs.rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * Mirrors the user's `info/exclude` into the store so status ignores exactly what the user's git
 * ignores. A status started ahead ran with the old copy: it is dropped when the copy changes.
 */
export async function syncExcludes(commonDir: string, storeGitDir: string): Promise<void> {
  const source = (await readOptional(path.join(commonDir, "info", "exclude"))) ?? Buffer.alloc(0);
  const target = path.join(storeGitDir, "info", "exclude");
  const current = await readOptional(target);
  if (current?.equals(source)) return;
  discardStatusAhead("info/exclude changed");
  await writeFileAtomic(target, source, 0o600, false); // a copy, made again whenever it differs
}
