import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { hermeticEnv, tempDir } from "./env.js";

export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/ghostcommit.cjs");

/** Copies the command-line tool (the bin and the bundle it runs) into `dir`; returns the bin's path. */
export function copyCli(dir: string): string {
  for (const name of ["ghostcommit.cjs", "cli.cjs"]) {
    copyFileSync(path.join(path.dirname(CLI), name), path.join(dir, name));
  }
  return path.join(dir, "ghostcommit.cjs");
}

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
  json: any;
}

/**
 * A sandbox for one test: a temp HOME with hermetic git config and data dir, and helpers to make
 * repositories and plain directories in it and to run the real CLI as a subprocess.
 */
export class Sandbox {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;

  constructor() {
    this.home = tempDir();
    this.env = hermeticEnv(this.home);
    // the library reads these from process.env when used in-process
  }

  /** Makes process.env hermetic too, for tests that call the library directly. */
  applyToProcess(): void {
    for (const key of Object.keys(process.env)) if (key.startsWith("GIT_")) delete process.env[key];
    Object.assign(process.env, this.env);
  }

  dir(name: string): string {
    const dir = path.join(this.home, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** A new repository with one commit holding `files`. */
  repo(name = "repo", files: Record<string, string> = { "README.md": "hello\n" }): Repo {
    const dir = this.dir(name);
    this.git(dir, "init", "-q", "-b", "main");
    const repo = new Repo(this, dir);
    if (Object.keys(files).length > 0) {
      repo.write(files);
      this.git(dir, "add", "-A");
      this.git(dir, "commit", "-q", "-m", "initial");
    }
    return repo;
  }

  /**
   * The same repository for thousands of files, made in seconds: `git add` writes a loose object
   * file for each (and a gc must then pack them), so the commit is made as one pack by
   * `git fast-import`, and the index read from it and refreshed against the files written.
   */
  packedRepo(name: string, files: Record<string, string>): Repo {
    const dir = this.dir(name);
    this.git(dir, "init", "-q", "-b", "main");
    const repo = new Repo(this, dir);
    repo.write(files);
    const stream = [
      `commit refs/heads/main\ncommitter Test <test@example.com> 1700000000 +0000\ndata 8\ninitial\n`,
    ];
    for (const [rel, content] of Object.entries(files)) {
      if (/^"|\n/.test(rel)) throw new Error(`packedRepo: ${JSON.stringify(rel)} would need quoting`);
      stream.push(`M 100644 inline ${rel}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    }
    // fast-import grows and shrinks its heap in small steps (~77,000 brk calls for 20,000 files),
    // which take ~23 s on a VM whose brk is slow; a larger step makes it one second.
    const env = { ...this.env, MALLOC_TOP_PAD_: String(64 << 20) };
    execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, env, input: stream.join("") });
    // As a commit leaves it: every entry, its stat data and the whole cache tree.
    this.git(dir, "read-tree", "HEAD");
    this.git(dir, "update-index", "-q", "--refresh");
    return repo;
  }

  git(cwd: string, ...args: string[]): string {
    return execFileSync("git", args, {
      cwd,
      env: this.env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  }

  /** Runs the CLI; `--json` output is parsed when present. */
  cli(cwd: string, args: string[], input?: string, extraEnv: NodeJS.ProcessEnv = {}): CliResult {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      cwd,
      env: { ...this.env, ...extraEnv },
      input,
      encoding: "utf8",
      timeout: 60_000,
    });
    let json: any;
    if (args.includes("--json")) {
      try {
        json = JSON.parse(result.stdout);
      } catch {
        json = undefined;
      }
    }
    return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, json };
  }

  /** Runs the CLI with --json and expects success. */
  ok(cwd: string, ...args: string[]): any {
    const result = this.cli(cwd, [...args, "--json"]);
    if (result.status !== 0) {
      throw new Error(
        `ghostcommit ${args.join(" ")} exited ${result.status}: ${result.stderr}${result.stdout}`,
      );
    }
    return result.json;
  }

  cleanup(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** A work tree with small helpers for files. */
export class Repo {
  constructor(
    readonly sandbox: Sandbox,
    readonly dir: string,
  ) {}

  path(rel: string): string {
    return path.join(this.dir, rel);
  }

  write(files: Record<string, string | Buffer>): void {
    for (const [rel, content] of Object.entries(files)) {
      const file = this.path(rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
  }

  read(rel: string): string {
    return readFileSync(this.path(rel), "utf8");
  }

  exists(rel: string): boolean {
    return existsSync(this.path(rel));
  }

  remove(rel: string): void {
    rmSync(this.path(rel), { recursive: true, force: true });
  }

  symlink(target: string, rel: string): void {
    mkdirSync(path.dirname(this.path(rel)), { recursive: true });
    symlinkSync(target, this.path(rel));
  }

  chmod(rel: string, mode: number): void {
    chmodSync(this.path(rel), mode);
  }

  git(...args: string[]): string {
    return this.sandbox.git(this.dir, ...args);
  }

  /** `lib` as a submodule at `at`, committed (git refuses a local file:// source unless allowed). */
  addSubmodule(lib: Repo, at: string): void {
    this.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.dir, at);
    this.git("commit", "-qm", `submodule ${at}`);
  }

  cli(args: string[], input?: string): CliResult {
    return this.sandbox.cli(this.dir, args, input);
  }

  ok(...args: string[]): any {
    return this.sandbox.ok(this.dir, ...args);
  }

  /** `git status --porcelain` of the user's repository. */
  status(): string {
    return this.git("status", "--porcelain=v1", "-uall");
  }
}
