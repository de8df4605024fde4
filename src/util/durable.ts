import { childProcess } from "./child-process.js";
import { constants, promises as fs, statSync } from "node:fs";
import { GhostcommitError } from "../errors.js";
import { WaitingChild } from "./detached.js";

/**
 * Durability against a machine crash (power cut, VM killed, kernel panic), not only a killed
 * process: the page cache survives `kill -9` but not these. The rules used throughout:
 * a file's bytes are fsynced before the rename that gives it its final name, and the directory
 * whose entries a rename, link, unlink or mkdir changed is fsynced afterwards.
 */

/** Writes a new file (fails if it exists) and flushes it before returning. */
export async function writeFileSynced(
  file: string | Buffer,
  content: string | Buffer,
  mode = 0o666,
): Promise<void> {
  const handle = await fs.open(file, "wx", mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const UNFLUSHABLE = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EACCES", "EPERM"]);

/**
 * Fsyncs directories whose entries changed, all at once (the kernel batches concurrent flushes
 * into one journal commit).
 */
export async function syncDirs(dirs: Iterable<string | Buffer>): Promise<void> {
  const unique = new Map<string, string | Buffer>();
  for (const dir of dirs) unique.set(Buffer.isBuffer(dir) ? dir.toString("latin1") : dir, dir);
  await Promise.all(
    [...unique.values()].map(async (dir) => {
      let handle: fs.FileHandle;
      try {
        // Never through a symlink: one may stand where a restored directory was.
        handle = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch (error) {
        // Gone or replaced since (by a file or a symlink): nothing of it is left to persist. One
        // that may not be read cannot be opened to flush; the system writes it back in time.
        if (UNFLUSHABLE.has((error as NodeJS.ErrnoException).code ?? "")) return;
        throw error;
      }
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }),
  );
}

/**
 * Past this many files, one `syncfs` of their file system costs less than an fsync each: measured
 * here, 20 files cost 20 ms by parallel fsyncs against ~40 ms for `sync -f`, 92 files 55 against
 * 76 ms, and 600 restored files seconds of fsyncs on a busy disk.
 */
export const MANY_FILES = 100;

/**
 * Flushes everything written to the file systems holding `paths`: one `syncfs` each (coreutils
 * `sync -f`; Node has no binding). Chosen over fsyncing each new object and its fan-out directory
 * because it is the only way to also cover what a snapshot needs but did not just write: objects
 * an earlier snapshot wrote (a later one only refreshes their mtime), objects git itself writes
 * (plain directories' `update-index`/`write-tree`), the user's own recent loose objects a
 * snapshot borrows, and the store's own skeleton. Measured on ext4 (virtio disk, 2 shared cores),
 * for the ~90 objects of a 20-file snapshot: fsync of each file plus its directory, all in
 * parallel, 55 ms median; `sync -f`, spawn included, 76 ms median (30 files: 25 vs 38 ms); close
 * enough that completeness decides. Its cost grows with other programs' unwritten data on the
 * same file system. Where `sync -f` is missing (not coreutils), a plain `sync` flushes everything.
 */
export async function syncFileSystems(paths: string[]): Promise<void> {
  const byDevice = oneEachFileSystem(paths);
  if (byDevice.length === 0) return;
  try {
    await run("sync", ["-f", ...byDevice]);
  } catch {
    try {
      await run("sync", []);
    } catch (error) {
      throw new GhostcommitError(
        "io",
        `cannot flush ${byDevice.join(", ")} to disk (sync failed): ${(error as Error).message}`,
      );
    }
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    childProcess().execFile(
      command,
      args,
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" } },
      (error) => (error ? reject(error) : resolve()),
    );
  });
}

/** One of `paths` per file system they are on (those that exist). */
function oneEachFileSystem(paths: string[]): string[] {
  const byDevice = new Map<number, string>();
  for (const p of paths) {
    const stat = statSync(p, { throwIfNoEntry: false });
    if (stat && !byDevice.has(stat.dev)) byDevice.set(stat.dev, p);
  }
  return [...byDevice.values()];
}

/** Exits 0 only once told to flush and the flush succeeded; anything else (this process gone) exits 3 unflushed. */
const FLUSH_WHEN_TOLD = 'IFS= read -r go && [ "$go" = flush ] || exit 3; sync -f "$@" 2>/dev/null || sync';

/**
 * `syncFileSystems` made ready in advance: in a short-lived command, a shell started while the
 * command's status runs waits on its input, and `flush` tells it to go. Spawning from Node
 * blocks this thread ~10 ms (a fork of a process of Node's size) and `sync` then starts; done
 * at the flush, that was on the critical path of every turn end and restore, and during status
 * it costs nothing. Should this process end without flushing, the shell reads the end of its
 * input and exits. Where it could not be made ready, `flush` runs `syncFileSystems`.
 */
export class FlushAhead {
  private readonly shell: WaitingChild<null>;

  constructor(paths: () => string[]) {
    this.shell = new WaitingChild(() => {
      const onEach = process.platform === "win32" ? [] : oneEachFileSystem(paths());
      if (onEach.length === 0) return null;
      const child = childProcess().spawn("/bin/sh", ["-c", FLUSH_WHEN_TOLD, "sh", ...onEach], {
        stdio: ["pipe", "ignore", "ignore"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
      });
      return { child, with: null };
    });
  }

  /** Flushes the file systems (through the waiting shell where there is one). */
  async flush(fallback: string[]): Promise<void> {
    const child = this.shell.take()?.child;
    if (child?.stdin) {
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.stdin.end("flush\n");
      if ((await exited) === 0) return;
    }
    await syncFileSystems(fallback); // not made ready, or it failed: the plain way, with its error
  }
}
