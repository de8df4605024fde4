import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

/**
 * The flush of a durable snapshot (a turn's end, a restore's way back) made ready while the
 * command's status runs: a shell that waits on its input and runs `sync -f` once told. Run in a
 * short-lived Node process of its own, as the command-line tool runs, under `strace -f`.
 */

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/util");

/**
 * Runs `body` after a FlushAhead of a sandbox directory was made and the command's git "started"
 * (`gitRunning`); returns the traced calls, one per line, and the process's exit status.
 */
function traced(name: string, body: string): { status: number | null; lines: string[] } {
  const dir = sandbox.dir(name);
  const script = path.join(dir, "run.mjs");
  writeFileSync(
    script,
    `import { writeSync } from "node:fs";
import { gitRunning, markProcessShortLived } from ${JSON.stringify(`${dist}/detached.js`)};
import { FlushAhead } from ${JSON.stringify(`${dist}/durable.js`)};
const dir = ${JSON.stringify(dir)};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Should something left running keep this process alive, it fails rather than hang the test.
setTimeout(() => process.exit(7), 10_000).unref();
markProcessShortLived();
const ahead = new FlushAhead(() => [dir]);
gitRunning();
await sleep(300);
${body}
`,
  );
  const traceFile = path.join(dir, "trace.txt");
  const result = spawnSync(
    "strace",
    ["-f", "-q", "-e", "trace=execve,syncfs,write,kill", "-o", traceFile, process.execPath, script],
    { env: sandbox.env, encoding: "utf8", timeout: 30_000 },
  );
  if (result.error) throw result.error;
  return { status: result.status, lines: readFileSync(traceFile, "utf8").split("\n") };
}

const lineOf = (lines: string[], pattern: RegExp) => lines.findIndex((line) => pattern.test(line));

describe("a durable snapshot's flush, made ready ahead", () => {
  it("is a shell started while git runs, which flushes only once told", () => {
    const { status, lines } = traced(
      "told",
      `writeSync(2, "flush now\\n");
await ahead.flush([dir]);
writeSync(2, "flushed\\n");`,
    );
    expect(status).toBe(0);
    const shell = lineOf(lines, /execve\("\/bin\/sh"/);
    const told = lineOf(lines, /write\(2, "flush now/);
    const synced = lineOf(lines, /syncfs\(.*= 0/);
    const returned = lineOf(lines, /write\(2, "flushed/);
    expect(shell).toBeGreaterThanOrEqual(0);
    expect(told).toBeGreaterThan(shell); // started before the flush was wanted
    expect(synced).toBeGreaterThan(told); // and flushed only once told
    expect(returned).toBeGreaterThan(synced);
    expect(lines.filter((line) => /execve\("[^"]*\/sync"/.test(line) && /= 0$/.test(line))).toHaveLength(1);
  });

  it("flushes nothing when the command ends without a flush, and its shell does not outlive it", () => {
    const { status, lines } = traced("untold", `writeSync(2, "done\\n");`);
    expect(status).toBe(0);
    expect(lineOf(lines, /execve\("\/bin\/sh"/)).toBeGreaterThanOrEqual(0);
    expect(lineOf(lines, /syncfs\(/)).toBe(-1);
    // The shell read the end of its input and exited unflushed (strace waits for every traced process).
    expect(lines.some((line) => /\+\+\+ exited with 3 \+\+\+/.test(line))).toBe(true);
  });

  it("still flushes, the plain way, when the waiting shell is gone", () => {
    const { status, lines } = traced(
      "gone",
      `// The waiting shell: this process's child running /bin/sh.
import("node:fs").then(async ({ readdirSync, readFileSync }) => {
  for (const pid of readdirSync("/proc").filter((name) => /^\\d+$/.test(name))) {
    let stat = "";
    try { stat = readFileSync(\`/proc/\${pid}/stat\`, "utf8"); } catch { continue; }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[1]) === process.pid && stat.includes("(sh)")) process.kill(Number(pid), "SIGKILL");
  }
  await sleep(200);
  writeSync(2, "flush now\\n");
  await ahead.flush([dir]);
  writeSync(2, "flushed\\n");
});`,
    );
    expect(status).toBe(0);
    expect(lineOf(lines, /kill\(\d+, SIGKILL\)/)).toBeGreaterThanOrEqual(0);
    const told = lineOf(lines, /write\(2, "flush now/);
    const synced = lineOf(lines, /syncfs\(.*= 0/);
    expect(synced).toBeGreaterThan(told);
    expect(lineOf(lines, /write\(2, "flushed/)).toBeGreaterThan(synced);
  });
});
