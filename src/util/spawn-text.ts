import { childProcess } from "./child-process.js";

/**
 * Runs a helper program (not git: that is git/exec.ts) and returns its standard output, or null
 * when it cannot start, fails, or runs past `timeoutMs`. For optional tools whose absence or
 * failure only means doing without them.
 */
export function spawnText(
  program: string,
  args: string[],
  timeoutMs = 10_000,
  env?: NodeJS.ProcessEnv,
): Promise<string | null> {
  return new Promise((resolve) => {
    const child = childProcess().spawn(program, args, {
      stdio: ["ignore", "pipe", "ignore"],
      timeout: timeoutMs,
      ...(env ? { env } : {}),
    });
    const out: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.on("error", () => resolve(null));
    child.on("close", (code) => resolve(code === 0 ? Buffer.concat(out).toString("utf8") : null));
  });
}
