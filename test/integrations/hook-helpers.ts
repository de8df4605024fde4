import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CLI, type CliResult, type Repo, Sandbox } from "../helpers/repo.js";

/** Feeds one event to `ghostcommit hook <agent>` as the agent would: JSON on stdin, from `cwd`. */
/** A fresh sandbox with a small app repository holding an ignored `.env`, as the hook tests use. */
export function appWithSecret(): { sandbox: Sandbox; repo: Repo } {
  const sandbox = new Sandbox();
  const repo = sandbox.repo("repo", { ".gitignore": ".env\n", "src/app.js": "v0\n" });
  repo.write({ ".env": "KEY=old\n" });
  return { sandbox, repo };
}

export function hook(
  sandbox: Sandbox,
  agent: string,
  event: unknown,
  cwd: string,
  args: string[] = [],
): CliResult {
  const input = typeof event === "string" ? event : JSON.stringify(event);
  return sandbox.cli(cwd, ["hook", agent, ...args], input);
}

/** Every line of every workspace hook log in the sandbox's data dir. */
export function hookLogs(sandbox: Sandbox): any[] {
  const root = path.join(sandbox.home, "data", "workspaces");
  if (!existsSync(root)) return [];
  const lines: any[] = [];
  for (const key of readdirSync(root)) {
    const file = path.join(root, key, "ghostcommit.log");
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) if (line) lines.push(JSON.parse(line));
  }
  return lines;
}

/** Asserts the hook contract: exit 0, and stdout exactly `expected` (nothing by default). */
export function expectQuiet(result: CliResult, expected = ""): void {
  if (result.status !== 0 || result.stdout.trim() !== expected) {
    throw new Error(
      `hook exited ${result.status} with stdout ${JSON.stringify(result.stdout)}: ${result.stderr}`,
    );
  }
}

/** The command `install` writes: Node and the CLI entry by absolute, quoted paths. */
export function installedCommand(agent: string, entry = CLI): string {
  return `'${process.execPath.replace(/'/g, `'\\''`)}' '${entry.replace(/'/g, `'\\''`)}' hook ${agent}`;
}

/** The bare environment agents run hooks with: a PATH without Node's, their HOME, and `extra`. */
export function agentHookEnv(sandbox: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: "/usr/bin:/bin",
    HOME: sandbox.home,
    GHOSTCOMMIT_HOME: sandbox.env.GHOSTCOMMIT_HOME!,
    GIT_CONFIG_GLOBAL: sandbox.env.GIT_CONFIG_GLOBAL!,
    GIT_CONFIG_NOSYSTEM: "1",
    ...extra,
  };
}

/**
 * Runs a hook command the way agents do: `/bin/sh -c` with a bare PATH and only the variables the
 * agent passes on (its HOME, and here the sandbox's data dir and git config), from `cwd`.
 */
export function shellHook(
  sandbox: Sandbox,
  command: string,
  event: unknown,
  cwd: string,
  env: Record<string, string> = {},
): CliResult {
  const vars = agentHookEnv(sandbox, env);
  const result = spawnSync(
    "/usr/bin/env",
    ["-i", ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), "/bin/sh", "-c", command],
    {
      cwd,
      input: typeof event === "string" ? event : JSON.stringify(event),
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, json: undefined };
}

/** The workspace stores in the sandbox's data dir. */
export function storeCount(sandbox: Sandbox): number {
  const root = path.join(sandbox.home, "data", "workspaces");
  return existsSync(root) ? readdirSync(root).length : 0;
}
