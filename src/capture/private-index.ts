import { randomHex } from "../util/crypto.js";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  promises as fs,
  renameSync,
  statSync,
  utimesSync,
} from "node:fs";
import path from "node:path";
import { indexChecksum, usesSplitIndex } from "../git/index-file.js";
import { readJson, STORE_FILES, writeFileAtomic } from "../store/layout.js";
import { buildInBackground, buildInProgress } from "./status-cache.js";
import { type IndexStamp, persistDue } from "./status-plan.js";

/**
 * The private index status runs against: a copy of the user's index, made again whenever the
 * user's git writes a new one (its checksum changes). Null for a split index, whose shared part
 * git looks for beside the user's index only: then status reads the user's index without writing.
 * "deferred" where a detached process is to make the copy (or is making it), unless `build`
 * (that process): status then also reads the user's index.
 */
export async function privateIndex(
  storeDir: string,
  userGitDir: string,
  build: boolean,
  ignoreCase: boolean,
): Promise<PrivateIndex | "deferred" | null> {
  if (usesSplitIndex(userGitDir)) return null;
  const userIndex = path.join(userGitDir, "index");
  const target = path.join(storeDir, STORE_FILES.statusIndex);
  const stampFile = path.join(storeDir, STORE_FILES.statusIndexSource);
  const checksum = await indexChecksum(userIndex);
  const stamp = await readJson<IndexStamp | null>(stampFile, null);
  const present = existsSync(target);
  // Git's untracked cache does not record core.ignoreCase: a copy made under the other value
  // would answer with the other value's verdicts, so it is made again.
  const current =
    stamp?.source === checksum &&
    (stamp.ignoreCase ?? false) === ignoreCase &&
    (present || checksum === null);
  const writes = current && Number.isInteger(stamp?.writes) ? stamp!.writes! : 0;
  const index: PrivateIndex = {
    file: target,
    reused: current && present,
    due: (watchman, watchStarted) => persistDue(current ? stamp : null, watchman, watchStarted),
    markPersisted: (watchStarted) =>
      writeFileAtomic(
        stampFile,
        JSON.stringify({
          source: checksum,
          ignoreCase,
          writes: watchStarted ? 1 : writes + 1,
          writtenAt: Date.now(),
        } satisfies IndexStamp),
        0o600,
        false, // only timing: a lost update costs one more index write
      ),
  };
  if (!build && (await buildInProgress(storeDir))) return "deferred";
  if (current) return index;
  if (!build && (await buildInBackground(userIndex))) return "deferred";
  const temp = `${target}.tmp-${process.pid}-${randomHex(4)}`;
  if (checksum === null) await fs.rm(target, { force: true });
  else {
    // The copy keeps (just under) the original's mtime: git treats entries modified at or after
    // its index's mtime as "racily clean" and compares their content, and a fresh mtime would
    // make it trust a same-size edit made within the file system's timestamp granularity.
    // Synchronous: status waits for the copy, and each call's thread-pool round trip cost more
    // than the call itself (the copy of a 10 MB index included).
    const { mtimeMs, atime } = statSync(userIndex);
    copyFileSync(userIndex, temp);
    chmodSync(temp, 0o600); // private, as everything under the data home
    utimesSync(temp, atime, new Date(Math.floor(mtimeMs) - 1));
    renameSync(temp, target);
  }
  // Unflushed, like the copy: whatever index status reads, its answer is right (it compares the
  // work tree with that index and the index with HEAD), and flushing this stamp would make the file
  // system write out the fresh 10 MB copy first (~20 ms on 100k files).
  await writeFileAtomic(
    stampFile,
    JSON.stringify({ source: checksum, ignoreCase } satisfies IndexStamp),
    0o600,
    false,
  );
  return index;
}

export interface PrivateIndex {
  file: string;
  /** Made by an earlier capture from the user's index as it is now (not made again by this one). */
  reused: boolean;
  /** Whether status should write its caches into the copy this time. */
  due: (watchman: boolean, watchStarted: boolean) => boolean;
  markPersisted: (watchStarted: boolean) => Promise<void>;
}
