import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { childProcess } from "../util/child-process.js";
import { GhostcommitError } from "../errors.js";
import { whenGitRuns } from "../util/detached.js";
import { baseGitEnv, runGit } from "./exec.js";
import { badGitConfig, gitConfigProblem } from "./failure.js";
import type { ObjectCache } from "./object-cache.js";
import { readLoose } from "./loose-read.js";

export interface StoredObject {
  type: string;
  content: Buffer;
}

interface Pending {
  oid: string;
  resolve: (value: StoredObject | null) => void;
  reject: (error: Error) => void;
}

/**
 * One long-lived `git cat-file --batch` for any number of object reads. Requests are answered
 * in order; a missing object resolves to null; git dying (a corrupt object) rejects everything
 * outstanding.
 */
export class CatFile {
  private child: ChildProcessWithoutNullStreams | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  /** Output not yet joined to `buffer`: a large object's chunks are joined once, when all are in. */
  private parts: Buffer[] = [];
  private held = 0;
  private need = 0;
  private queue: Pending[] = [];
  private failed: Error | undefined;
  private stderr = "";
  private closing = false;
  private corked = false;

  constructor(
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  private start(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = childProcess().spawn("git", ["cat-file", "--batch"], {
      cwd: this.cwd,
      env: { ...baseGitEnv(), ...this.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => {
      this.parts.push(chunk);
      this.held += chunk.length;
      if (this.held < this.need) return; // joining each 64 KiB chunk made a large blob quadratic
      this.buffer =
        this.buffer.length === 0 && this.parts.length === 1
          ? chunk
          : Buffer.concat([this.buffer, ...this.parts]);
      this.parts = [];
      this.need = 0;
      this.drain();
      this.held = this.buffer.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8");
    });
    child.stdin.on("error", () => {});
    child.on("error", (error) => this.fail(error));
    child.on("close", () => {
      if (!this.closing || this.queue.length > 0)
        this.fail(new Error(this.stderr.trim() || "git cat-file exited"));
    });
    this.child = child;
    return child;
  }

  private fail(cause: Error): void {
    const config = gitConfigProblem(this.stderr, this.cwd);
    this.failed ??= config
      ? badGitConfig(config, cause)
      : new GhostcommitError("store-damaged", `cannot read objects: ${cause.message}`, {}, cause);
    for (const pending of this.queue.splice(0)) pending.reject(this.failed);
  }

  private drain(): void {
    while (this.queue.length > 0) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline === -1) return;
      const header = this.buffer.toString("latin1", 0, newline);
      const pending = this.queue[0];
      if (header.endsWith(" missing") || header.endsWith(" ambiguous")) {
        this.buffer = this.buffer.subarray(newline + 1);
        this.queue.shift();
        pending.resolve(null);
        continue;
      }
      const [, type, sizeText] = header.split(" ");
      const size = Number(sizeText);
      if (this.buffer.length < newline + 1 + size + 1) {
        this.need = newline + 1 + size + 1;
        return;
      }
      const content = Buffer.from(this.buffer.subarray(newline + 1, newline + 1 + size));
      this.buffer = this.buffer.subarray(newline + 1 + size + 1);
      this.queue.shift();
      pending.resolve({ type, content });
    }
  }

  private cache: ObjectCache | null = null;

  /** Answers from `cache` where it can (no git process at all if it always can), and notes what git answered in it. */
  useCache(cache: ObjectCache | null): void {
    this.cache = cache;
  }

  private looseDir: string | null = null;

  /**
   * Reads objects stored loose in `objectsDir` from Node first: a turn's progress marks are
   * written loose, and the next mark edits them, so it often needs no git process at all.
   */
  preferLoose(objectsDir: string): void {
    this.looseDir = objectsDir;
  }

  /** Reads one object (null when it does not exist). */
  read(oid: string): Promise<StoredObject | null> {
    const loose = this.looseDir === null ? null : readLoose(this.looseDir, oid);
    if (loose) return Promise.resolve(loose);
    const cache = this.cache;
    const cached = cache?.get(oid);
    if (cached) return Promise.resolve(cached);
    if (this.failed) return Promise.reject(this.failed);
    const child = this.start();
    const answer = new Promise<StoredObject | null>((resolve, reject) => {
      this.queue.push({ oid, resolve, reject });
      this.send(child, `${oid}\n`);
    });
    if (!cache) return answer;
    return answer.then((object) => {
      if (object) cache.note(oid, object);
      return object;
    });
  }

  /**
   * Requests made in one turn of the event loop (a tree's subdirectories, read side by side) go
   * to git in one write: each write to the pipe wakes git and costs a system call, ~0.1–0.2 ms
   * apiece on a busy machine.
   */
  private send(child: ChildProcessWithoutNullStreams, line: string): void {
    if (!this.corked) {
      this.corked = true;
      child.stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        child.stdin.uncork();
      });
    }
    child.stdin.write(line);
  }

  /** Reads an object that must exist with the given type. */
  async readExpect(oid: string, type: string): Promise<Buffer> {
    const object = await this.read(oid);
    if (!object || object.type !== type) {
      throw new GhostcommitError("store-damaged", `object ${oid} is missing or not a ${type}`, { oid });
    }
    return object.content;
  }

  /** `close` was called: nothing starts git ahead after it. */
  private closed = false;

  /**
   * Starts git once this command's status runs (see `whenGitRuns`), for a command that reads
   * objects after it (a restore's plan reads the target's files): the spawn, ~10 ms of this
   * thread for a process of Node's size, and git's start then cost nothing. Not once closed.
   */
  startAhead(): void {
    whenGitRuns(() => {
      if (!this.closed && !this.failed) this.start();
    });
  }

  close(): void {
    this.closed = true;
    if (!this.child) return;
    this.closing = true;
    this.child.stdin.end();
    this.child = undefined;
  }
}

/**
 * Of `oids`, those git cannot find where `options` point it (one `cat-file --batch-check`, no
 * content read). Without a promisor remote configured there, a missing object is named, not fetched.
 */
export async function missingObjects(
  oids: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<string[]> {
  if (oids.length === 0) return [];
  const result = await runGit(["cat-file", "--batch-check=%(objectname)"], {
    ...options,
    input: `${oids.join("\n")}\n`,
  });
  return result.stdout
    .toString("latin1")
    .split("\n")
    .filter((line) => line.endsWith(" missing"))
    .map((line) => line.split(" ")[0]);
}
