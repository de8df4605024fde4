import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll } from "vitest";
import { Repo, Sandbox } from "../helpers/repo.js";

/**
 * Two "machines" sharing one git remote: each has its own HOME, git config and GHOSTCOMMIT_HOME,
 * and its own clone. The remote is a bare repository in its own directory.
 */
export function machines(): { a: Sandbox; b: Sandbox; bare: (name?: string) => string } {
  const a = new Sandbox();
  const b = new Sandbox();
  const hub = new Sandbox();
  afterAll(() => {
    for (const s of [a, b, hub]) s.cleanup();
  });
  const bare = (name = "remote.git") => {
    const dir = path.join(hub.home, name);
    hub.git(hub.home, "init", "-q", "--bare", "-b", "main", dir);
    return dir;
  };
  return { a, b, bare };
}

/** A repository on machine `sandbox` whose `origin` is `url`, with main pushed there. */
export function originRepo(sandbox: Sandbox, name: string, url: string, files: Record<string, string>): Repo {
  const repo = sandbox.repo(name, files);
  repo.git("remote", "add", "origin", url);
  repo.git("push", "-q", "origin", "main");
  return repo;
}

/** A clone as `git clone` makes it, without the local-path shortcut that hard-links every object. */
export function cloneOf(sandbox: Sandbox, url: string, name: string): Repo {
  const target = path.join(sandbox.home, name);
  const source = url.includes("://") ? url : `file://${url}`;
  sandbox.git(sandbox.home, "clone", "-q", source, target);
  return new Repo(sandbox, target);
}

/** Runs a turn through the CLI: begin, change files, end. */
export function cliTurn(repo: Repo, session: string, turn: string, change: () => void): void {
  repo.ok("turn", "begin", "--session", session, "--turn", turn, "--prompt", `turn ${turn}`);
  change();
  repo.ok("turn", "end", "--session", session, "--turn", turn);
}

/** Refs under refs/ghostcommit/ of a git directory. */
export function ghostRefs(sandbox: Sandbox, gitDir: string): string[] {
  return sandbox
    .git(gitDir, "for-each-ref", "--format=%(refname)", "refs/ghostcommit/")
    .split("\n")
    .filter(Boolean);
}

/** A hook script in a bare repository. */
export function hook(bareDir: string, name: string, script: string): string {
  const file = path.join(bareDir, "hooks", name);
  writeFileSync(file, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  return file;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `git daemon` serving `base` on 127.0.0.1 (a real network transport), pushes enabled; resolves
 * once it answers. `stop` ends it.
 */
export async function gitDaemon(sandbox: Sandbox, base: string): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const args = [
    "--reuseaddr",
    "--export-all",
    "--enable=receive-pack",
    "--informative-errors",
    "--listen=127.0.0.1",
    `--port=${port}`,
    `--base-path=${base}`,
    base,
  ];
  // A shell that ends the daemon once this test process is gone: a worker killed before its
  // afterAll (a timeout, a crash) left the daemon running for good.
  const watch = `git daemon "$@" & d=$!; trap 'kill $d; exit' TERM; while kill -0 ${process.pid} 2>/dev/null && kill -0 $d 2>/dev/null; do sleep 1; done; kill $d 2>/dev/null`;
  const child: ChildProcess = spawn("sh", ["-c", watch, "sh", ...args], {
    env: sandbox.env,
    stdio: "ignore",
  });
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  afterAll(stop);
  const url = `git://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`git daemon exited with ${child.exitCode}`);
    const probe = spawnSync("git", ["ls-remote", `${url}/probe`], { env: sandbox.env, encoding: "utf8" });
    // The daemon is up once it answers, even if only to say there is no such repository.
    if (probe.status === 0 || /no such repository|not exported|access denied/i.test(probe.stderr)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, stop };
}

/**
 * Sets the push after every turn in the user's own config of `repo`'s machine (the only place
 * ghostcommit takes `push` from: a repository's `.ghostcommit.json` may not set it).
 */
export function pushAfterTurn(repo: Repo, push: Record<string, unknown> | null): void {
  const settings = { watchman: false, ...(push ? { push: { after: "turn", ...push } } : {}) };
  for (const dir of [repo.sandbox.env.XDG_CONFIG_HOME!, path.join(repo.sandbox.home, ".config")]) {
    writeFileSync(path.join(dir, "ghostcommit", "config.json"), `${JSON.stringify(settings)}\n`);
  }
}
