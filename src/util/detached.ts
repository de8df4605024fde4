import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Starts a Node worker script detached from this process, so the caller (an agent's hook) never
 * waits for it: stdin and stdout closed, stderr appended to `logFile` (private). `candidates` are
 * where the script may be, relative to the calling module: beside it when running from dist/, or
 * in a subfolder when the caller is the bundled CLI. False when none exists.
 */
export function startDetachedWorker(
  candidates: URL[],
  args: string[],
  cwd: string,
  logFile: string,
): boolean {
  const worker = candidates.map((url) => fileURLToPath(url)).find((file) => existsSync(file));
  if (!worker) return false;
  const log = openSync(logFile, "a", 0o600);
  try {
    const child = spawn(process.execPath, [worker, ...args], {
      cwd,
      detached: true,
      stdio: ["ignore", "ignore", log],
    });
    child.on("error", () => {});
    child.unref();
    return true;
  } finally {
    closeSync(log);
  }
}
