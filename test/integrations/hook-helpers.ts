import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { CliResult, Sandbox } from "../helpers/repo.js";

/** Feeds one event to `ghostcommit hook <agent>` as the agent would: JSON on stdin, from `cwd`. */
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
