import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { DIST, killChildren, lineOf, runShortLived } from "../helpers/short-lived.js";

/**
 * The flush of a durable snapshot (a turn's end, a restore's way back) made ready while the
 * command's status runs: a shell that waits on its input and runs `sync -f` once told. Run in a
 * short-lived Node process of its own, as the command-line tool runs, under `strace -f`.
 */

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

/** Runs `body` once a FlushAhead of the script's own directory (`ahead`) could start. */
const traced = (name: string, body: string) =>
  runShortLived(sandbox, name, {
    imports: `import { FlushAhead } from ${JSON.stringify(`${DIST}/util/durable.js`)};`,
    setup: "const ahead = new FlushAhead(() => [dir]);",
    body,
    syscalls: "execve,syncfs,write,kill",
  });

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
      `${killChildren("sh")}
writeSync(2, "flush now\\n");
await ahead.flush([dir]);
writeSync(2, "flushed\\n");`,
    );
    expect(status).toBe(0);
    expect(lineOf(lines, /kill\(\d+, SIGKILL\)/)).toBeGreaterThanOrEqual(0);
    const told = lineOf(lines, /write\(2, "flush now/);
    const synced = lineOf(lines, /syncfs\(.*= 0/);
    expect(synced).toBeGreaterThan(told);
    expect(lineOf(lines, /write\(2, "flushed/)).toBeGreaterThan(synced);
  });
});
