import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, type Sandbox } from "./repo.js";

/**
 * A Node process of its own that is short-lived as the command-line tool is, for what such a
 * process starts ahead once its status runs (`whenGitRuns`): a script importing the built
 * modules, run under `strace -f`.
 */

/** The built modules (`npm test` builds first). */
export const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist");

export interface ShortLivedRun {
  status: number | null;
  stdout: string;
  /** strace's lines: the calls traced, in the order they completed. */
  lines: string[];
}

/**
 * Runs a script: `imports`, then `setup` (what is made ahead), then the command's git "starts"
 * (`gitRunning`), and 0.3 s later `body`. In it, `dir` is a directory of its own, `sleep(ms)`
 * waits, and `writeSync(2, …)` leaves a mark in the trace. Should something left running keep
 * it alive, it exits 7 after 10 s rather than hang the test.
 */
export function runShortLived(
  sandbox: Sandbox,
  name: string,
  script: { imports: string; setup: string; body: string; syscalls: string },
): ShortLivedRun {
  const dir = sandbox.dir(name);
  const file = path.join(dir, "run.mjs");
  writeFileSync(
    file,
    `import { writeSync } from "node:fs";
import { gitRunning, markProcessShortLived } from ${JSON.stringify(`${DIST}/util/detached.js`)};
${script.imports}
const dir = ${JSON.stringify(dir)};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
setTimeout(() => process.exit(7), 10_000).unref();
markProcessShortLived();
${script.setup}
gitRunning();
await sleep(300);
${script.body}
`,
  );
  const traceFile = path.join(dir, "trace.txt");
  const result = spawnSync(
    "strace",
    ["-f", "-q", "-e", `trace=${script.syscalls}`, "-o", traceFile, process.execPath, file],
    { env: sandbox.env, encoding: "utf8", timeout: 30_000 },
  );
  if (result.error) throw result.error;
  return {
    status: result.status,
    stdout: result.stdout,
    lines: straceLines(readFileSync(traceFile, "utf8")),
  };
}

/**
 * Runs the command-line tool in `cwd` under `strace -f`, tracing `syscalls`; the trace is written
 * into a directory of the sandbox named `name`.
 */
export function runCliTraced(
  sandbox: Sandbox,
  name: string,
  cwd: string,
  syscalls: string,
  args: string[],
): { status: number | null; stdout: string; stderr: string; lines: string[] } {
  const traceFile = path.join(sandbox.dir(name), "trace.txt");
  const result = spawnSync(
    "strace",
    ["-f", "-q", "-e", `trace=${syscalls}`, "-o", traceFile, process.execPath, CLI, ...args],
    { cwd, env: sandbox.env, encoding: "utf8", timeout: 60_000 },
  );
  if (result.error) throw result.error;
  return { ...result, lines: straceLines(readFileSync(traceFile, "utf8")) };
}

/** Script code that kills (SIGKILL) this process's children running `command` (their /proc name). */
export function killChildren(command: string): string {
  return `{
  const { readdirSync, readFileSync } = await import("node:fs");
  for (const pid of readdirSync("/proc").filter((name) => /^\\d+$/.test(name))) {
    let stat = "";
    try { stat = readFileSync(\`/proc/\${pid}/stat\`, "utf8"); } catch { continue; }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[1]) === process.pid && stat.includes(${JSON.stringify(`(${command})`)})) process.kill(Number(pid), "SIGKILL");
  }
  await sleep(200);
}`;
}

/**
 * `strace -f` output as one line per call, in the order the calls completed. A call that another
 * process's call interrupted is written in two parts, "<unfinished ...>" and then "<... name
 * resumed>" (more often the busier the machine): they are joined where the second part stood.
 */
export function straceLines(text: string): string[] {
  const lines: string[] = [];
  const begun = new Map<string, string>();
  for (const line of text.split("\n")) {
    const unfinished = /^(\d+) +(\w+)\((.*) <unfinished \.\.\.>$/.exec(line);
    if (unfinished) {
      begun.set(`${unfinished[1]} ${unfinished[2]}`, `${unfinished[1]} ${unfinished[2]}(${unfinished[3]}`);
      continue;
    }
    const resumed = /^(\d+) +<\.\.\. (\w+) resumed>(.*)$/.exec(line);
    const start = resumed ? begun.get(`${resumed[1]} ${resumed[2]}`) : undefined;
    if (resumed && start !== undefined) {
      begun.delete(`${resumed[1]} ${resumed[2]}`);
      lines.push(start + resumed[3]);
    } else lines.push(line);
  }
  return [...lines, ...begun.values()]; // calls a process never returned from (it exited in them)
}

/** The index of the first line matching `pattern`, or -1. */
export function lineOf(lines: string[], pattern: RegExp): number {
  return lines.findIndex((line) => pattern.test(line));
}

/**
 * Where the process whose execve matches `execve` was started (traced with clone, clone3, fork
 * and vfork): the line where its parent's fork returned its pid, or -1. Its own execve may be
 * reported after the parent has gone on (Node's spawn returns once the execve closes the
 * child's descriptors, before the call returns in the child), so on a loaded machine an
 * ordering by execve lines does not hold.
 */
export function startedAt(lines: string[], execve: RegExp): number {
  const pid = /^(\d+) /.exec(lines[lineOf(lines, execve)] ?? "")?.[1];
  return pid === undefined ? -1 : lineOf(lines, new RegExp(`^\\d+ +v?(clone3?|fork)\\(.*\\) = ${pid}$`));
}
