import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, realpathSync } from "node:fs";
import { parentOf, fsPath, type RelPath, relBytes } from "../paths.js";

/** Directories held open at once; past it, those no write is using are closed (and opened again if needed). */
const MAX_PINNED = 4096;

const OPEN_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The workspace's directories a restore writes in, each opened once from its parent's open
 * handle without following a symlink, then named by the handle: on Linux `/proc/self/fd/N/name`
 * resolves `name` in the directory held, as `openat` does. So a write, rename or delete lands in
 * the directory that was checked, even if another process swaps it for a symlink to somewhere
 * outside the workspace meanwhile (a dev server, the agent's own background shell). Where
 * `/proc/self/fd` is missing, full paths are used, each directory checked just before.
 */
export class PinnedDirs {
  private readonly handles = new Map<RelPath, number>();
  private readonly inUse = new Map<RelPath, number>();
  private readonly viaHandles: boolean;

  constructor(private readonly root: string) {
    this.viaHandles = process.platform === "linux" && existsSync("/proc/self/fd");
    // Where the workspace is reached through a symlink, that one is followed, once.
    if (this.viaHandles) this.handles.set("", openSync(realpathSync(root), OPEN_DIR));
  }

  /**
   * Opens directory `dir` (checked through every ancestor): "ok"; "missing" when a part of it does
   * not exist (made with `create`, reported by `made` with the new directory); "unsafe" when a part
   * is a symlink or a file. Only "ok" lets `path` name entries in it.
   */
  open(dir: RelPath, create: boolean, made?: (dir: RelPath) => void): "ok" | "missing" | "unsafe" {
    if (this.handles.has(dir) || dir === "") return "ok";
    const up = this.open(parentOf(dir), create, made);
    if (up !== "ok") return up;
    const at = this.path(dir);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (!stat) {
      if (!create) return "missing";
      try {
        mkdirSync(at);
        made?.(dir);
      } catch (error) {
        // Another write below the same new directory made it first.
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    } else if (!stat.isDirectory()) return "unsafe";
    if (!this.viaHandles) return lstatSync(at).isDirectory() ? "ok" : "unsafe";
    try {
      this.keep(dir, openSync(at, OPEN_DIR));
    } catch (error) {
      // Swapped for a symlink or a file between the look and the open.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ELOOP" || code === "ENOTDIR") return "unsafe";
      throw error;
    }
    return "ok";
  }

  /**
   * The path naming `rel` inside its opened parent (see `open`); `rel` "" names the workspace
   * itself. Held (`hold`) while an asynchronous call uses it, so its handle stays open.
   */
  path(rel: RelPath): Buffer {
    if (!this.viaHandles) return fsPath(this.root, rel);
    if (rel === "") return this.self("");
    const parent = parentOf(rel);
    const handle = this.handles.get(parent);
    if (handle === undefined) throw new Error(`internal: directory ${parent} is not open`);
    const name = relBytes(rel.slice(parent === "" ? 0 : parent.length + 1));
    return Buffer.concat([Buffer.from(`/proc/self/fd/${handle}/`), name]);
  }

  /** The path naming opened directory `dir` itself (through its own handle). */
  self(dir: RelPath): Buffer {
    const handle = this.handles.get(dir);
    if (!this.viaHandles) return fsPath(this.root, dir);
    if (handle === undefined) throw new Error(`internal: directory ${dir} is not open`);
    return Buffer.from(`/proc/self/fd/${handle}/.`);
  }

  /** Closes the handles of `dir` and of every directory below it (`dir` was removed). */
  forget(dir: RelPath): void {
    for (const [held, fd] of this.handles) {
      if (held === "" || (held !== dir && !held.startsWith(`${dir}/`))) continue;
      closeSync(fd);
      this.handles.delete(held);
    }
  }

  /** Keeps `dir`'s handle open until `release` (an asynchronous write through it is under way). */
  hold(dir: RelPath): void {
    this.inUse.set(dir, (this.inUse.get(dir) ?? 0) + 1);
  }

  release(dir: RelPath): void {
    const left = (this.inUse.get(dir) ?? 1) - 1;
    if (left > 0) this.inUse.set(dir, left);
    else this.inUse.delete(dir);
  }

  close(): void {
    for (const handle of this.handles.values()) closeSync(handle);
    this.handles.clear();
  }

  private keep(dir: RelPath, handle: number): void {
    if (this.handles.size >= MAX_PINNED) {
      // Oldest first, never the workspace's nor one in use (or its number could name another directory).
      for (const [held, fd] of this.handles) {
        if (held === "" || this.inUse.has(held) || held === parentOf(dir)) continue;
        closeSync(fd);
        this.handles.delete(held);
        if (this.handles.size < MAX_PINNED / 2) break;
      }
    }
    this.handles.set(dir, handle);
  }
}
