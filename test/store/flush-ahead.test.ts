import { afterAll, describe, expect, it } from "vitest";
import { Repo, Sandbox } from "../helpers/repo.js";
import {
  DIST,
  killChildren,
  lineOf,
  runCliTraced,
  runShortLived,
  startedAt,
} from "../helpers/short-lived.js";

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

describe("a turn's end starts its flush and its diff during its capture, not after it", () => {
  /**
   * `turn end` under strace: where the status, the flush's shell and the diff were started (see
   * `startedAt`), and where the capture's first object went into the store.
   */
  function endTraced(workspace: Repo, name: string) {
    workspace.ok("turn", "begin", "--session", "s", "--turn", "1");
    workspace.write({ "a.txt": "changed\n" });
    const result = runCliTraced(sandbox, name, workspace.dir, "execve,rename,clone,clone3,fork,vfork", [
      "turn",
      "end",
      "--session",
      "s",
      "--json",
    ]);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).changed).toEqual(["a.txt"]);
    const { lines } = result;
    const first = (pattern: RegExp, after = 0) => {
      const at = lines.slice(after).findIndex((line) => pattern.test(line));
      return at === -1 ? -1 : after + at;
    };
    const status = startedAt(lines, /execve\("[^"]*\/git", \["git", .*"status".* = 0$/);
    return {
      status,
      flush: startedAt(lines, /execve\("\/bin\/sh", .*read -r go.* = 0$/),
      diff: startedAt(lines, /execve\("[^"]*\/git", \["git", "diff-tree", .*"--stdin"\].* = 0$/),
      // A loose object or a pack renamed into place after status: the capture has written what it found.
      written: first(/rename\(".*\/objects\/(pack\/tmp_pack|[0-9a-f]{2}\/tmp_obj)/, status + 1),
    };
  }

  for (const kind of ["repository", "plain directory"] as const) {
    it(`in a ${kind}`, () => {
      const name = kind.replace(" ", "-");
      const files = { "a.txt": "1\n", "b.txt": "2\n" };
      let workspace: Repo;
      if (kind === "repository") workspace = sandbox.repo(`turn-${name}`, files);
      else {
        workspace = new Repo(sandbox, sandbox.dir(`turn-${name}`));
        workspace.write(files);
      }
      const { status, flush, diff, written } = endTraced(workspace, `trace-${name}`);
      expect(status).toBeGreaterThanOrEqual(0);
      expect(written).toBeGreaterThan(status);
      for (const ahead of [flush, diff]) {
        expect(ahead).toBeGreaterThan(status);
        expect(ahead).toBeLessThan(written);
      }
    });
  }
});
