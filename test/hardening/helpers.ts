import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { CLI, type Sandbox } from "../helpers/repo.js";

export interface AsyncCliResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the CLI without waiting; `killAfterMs` sends SIGKILL after that delay. */
export function cliAsync(
  sandbox: Sandbox,
  cwd: string,
  args: string[],
  killAfterMs?: number,
): Promise<AsyncCliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: sandbox.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer =
      killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("close", (status, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/**
 * The store directory (`$GHOSTCOMMIT_HOME/workspaces/<key>`) of the workspace at `root`, or the
 * sandbox's one store when no root is given.
 */
export function storeDir(sandbox: Sandbox, root?: string): string {
  const base = path.join(sandbox.env.GHOSTCOMMIT_HOME as string, "workspaces");
  const keys = readdirSync(base).filter(
    (key) =>
      root === undefined ||
      JSON.parse(readFileSync(path.join(base, key, "workspace.json"), "utf8")).root === root,
  );
  if (keys.length !== 1) throw new Error(`expected one store, found ${keys.length}`);
  return path.join(base, keys[0]);
}

/** `git fsck` of the store's git dir: exit status and the lines that are real problems. */
export function fsckStore(sandbox: Sandbox): { status: number; problems: string[] } {
  const result = spawnSync("git", ["fsck", "--no-dangling", "--no-progress"], {
    env: { ...sandbox.env, GIT_DIR: path.join(storeDir(sandbox), "git") },
    encoding: "utf8",
  });
  const problems = `${result.stdout}\n${result.stderr}`
    .split("\n")
    .filter((l) => l.trim() && !/^notice: HEAD points to an unborn branch/.test(l) && !/^Checking/.test(l));
  return { status: result.status ?? -1, problems };
}

/** Whether the sessions CLI (`turn begin`) is built into this CLI yet. */
export function hasTurnCommand(sandbox: Sandbox, cwd: string): boolean {
  const help = sandbox.cli(cwd, ["turn", "--help"]);
  return help.status === 0 && /begin/.test(help.stdout + help.stderr);
}

/** A small deterministic pseudo-random generator (tests must be reproducible). */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Every file below dir (not .git): path → type, mode and content hash. */
export function fingerprint(dir: string, rel = "", out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(path.join(dir, rel))) {
    if (rel === "" && name === ".git") continue;
    const child = rel ? `${rel}/${name}` : name;
    const full = path.join(dir, child);
    const stat = lstatSync(full);
    if (stat.isDirectory()) fingerprint(dir, child, out);
    else if (stat.isSymbolicLink()) out.set(child, `link:${readlinkSync(full)}`);
    else
      out.set(
        child,
        `${stat.mode & 0o111 ? "x" : "-"}:${createHash("sha1").update(readFileSync(full)).digest("hex")}`,
      );
  }
  return out;
}
