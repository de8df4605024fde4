import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { FSMONITOR_HOOK } from "../../src/capture/fsmonitor-hook.js";
import { tempDir } from "../helpers/env.js";
import { fileSandbox, filesOf } from "../helpers/support.js";

// Watchman's daemon gone (killed, `watchman shutdown-server`, a reboot): the next snapshots start
// it and the watch again, and no answer of the client alone is taken for Watchman's. Each test
// has a daemon of its own (its own TMPDIR holds Watchman's state and socket), stopped at its end.
const installed = spawnSync("watchman", ["--version"]).status === 0;
const { sandbox, repo } = fileSandbox();
const states: string[] = [];

/** An environment whose Watchman daemon is this test's alone. */
function ownWatchman(): NodeJS.ProcessEnv {
  const dir = tempDir("gc-wm-");
  states.push(dir);
  return { TMPDIR: dir, WATCHMAN_SOCK: undefined };
}

const watchman = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  spawnSync("watchman", ["--no-pretty", ...args], { env: { ...sandbox.env, ...env }, encoding: "utf8" });

/** The roots this test's daemon watches; null when it is not running (nothing is started). */
function watchRoots(env: NodeJS.ProcessEnv): string[] | null {
  const result = watchman(env, "--no-spawn", "watch-list");
  if (result.status !== 0) return null;
  return JSON.parse(result.stdout).roots ?? null;
}

describe.skipIf(!installed)("Watchman's daemon gone", () => {
  beforeAll(() =>
    writeFileSync(
      path.join(sandbox.env.XDG_CONFIG_HOME!, "ghostcommit", "config.json"),
      '{"watchman": true}\n',
    ),
  );
  afterEach(() => {
    for (const dir of states.splice(0)) {
      watchman({ TMPDIR: dir, WATCHMAN_SOCK: undefined }, "--no-spawn", "shutdown-server");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a snapshot after it stops starts the daemon and the watch again, and misses no edit meanwhile", async () => {
    const env = ownWatchman();
    const r = repo({ "a.txt": "a\n", "b.txt": "bee\n" });
    const snapshot = () => {
      const result = sandbox.cli(r.dir, ["snapshot", "--json"], undefined, env);
      expect(result.status, result.stderr).toBe(0);
      return result.json.id as string;
    };
    snapshot();
    snapshot(); // the private index now carries a clock of this daemon
    expect(watchRoots(env)).toEqual([r.dir]);
    expect(watchman(env, "shutdown-server").status).toBe(0);
    expect(watchRoots(env)).toBeNull();

    r.write({ "a.txt": "A\n", "new.txt": "new\n" }); // a.txt keeps its size
    expect(await filesOf(r, snapshot())).toEqual(["a.txt", "b.txt", "new.txt"]);
    const later = snapshot();
    expect(await filesOf(r, later)).toEqual(["a.txt", "b.txt", "new.txt"]);
    expect(watchRoots(env)).toEqual([r.dir]);
    const doctor = sandbox.cli(r.dir, ["doctor", "--json"], undefined, env);
    expect(doctor.json.watchman).toMatchObject({ inUse: true, startedWatch: r.dir });

    // And from then on, Watchman's answers again see every change.
    snapshot();
    r.write({ "b.txt": "BEE\n", "newer.txt": "newer\n" });
    r.remove("new.txt");
    const last = snapshot();
    expect(await filesOf(r, last)).toEqual(["a.txt", "b.txt", "newer.txt"]);
    r.ok("restore", later);
    expect(r.read("a.txt")).toBe("A\n");
    expect(r.read("b.txt")).toBe("bee\n");
    expect(r.exists("newer.txt")).toBe(false);
  });

  it("the very next snapshot starts it again, as doctor says, without telling again of the watch it told of", async () => {
    const env = ownWatchman();
    const r = repo({ "a.txt": "a\n" });
    const snapshot = () => sandbox.cli(r.dir, ["snapshot", "--json"], undefined, env);
    expect(snapshot().stderr).toContain(`Watchman now watches ${r.dir}`);
    snapshot();
    watchman(env, "shutdown-server");
    const doctor = () => sandbox.cli(r.dir, ["doctor", "--json"], undefined, env).json.watchman;
    expect(doctor()).toMatchObject({
      inUse: false,
      reason: expect.stringContaining("the next snapshot starts it"),
    });
    r.write({ "a.txt": "b\n", "new.txt": "new\n" });
    const next = snapshot();
    expect(next.status, next.stderr).toBe(0);
    expect(next.stderr).not.toContain("Watchman"); // a reboot would say it after each one
    expect(watchRoots(env)).toEqual([r.dir]);
    expect(await filesOf(r, next.json.id)).toEqual(["a.txt", "new.txt"]);
    expect(doctor()).toMatchObject({ inUse: true, startedWatch: r.dir });

    // The same where the store's index copy carries no clock of Watchman's (made again).
    watchman(env, "shutdown-server");
    rmSync(path.join(r.ok("doctor").store, "status-index"));
    r.write({ "b.txt": "bee\n" });
    const again = snapshot();
    expect(again.status, again.stderr).toBe(0);
    expect(watchRoots(env)).toEqual([r.dir]);
    expect(await filesOf(r, again.json.id)).toEqual(["a.txt", "b.txt", "new.txt"]);
  });

  it("a recorded socket nobody listens on while the daemon runs is found again, and the watch stays ghostcommit's", () => {
    const env = ownWatchman();
    const r = repo({ "a.txt": "a\n" });
    const snapshot = () =>
      sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { ...env, GHOSTCOMMIT_TRACE: "1" });
    snapshot();
    snapshot();
    const stateFile = path.join(r.ok("doctor").store, "watchman.json");
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    writeFileSync(stateFile, JSON.stringify({ ...state, socket: path.join(sandbox.home, "gone.sock") }));
    const next = snapshot();
    expect(next.status, next.stderr).toBe(0);
    expect(next.stderr).not.toContain("Watchman now watches");
    expect(next.stderr).toContain("capture: Watchman asked ahead");
    expect(JSON.parse(readFileSync(stateFile, "utf8"))).toMatchObject({
      socket: state.socket,
      startedByGhostcommit: true,
    });
  });

  it("the hook takes no answer of the client alone (no daemon) for Watchman's: git checks every file, and the watch is marked lost", () => {
    const env = ownWatchman();
    const r = repo({ "a.txt": "a\n" });
    const hook = path.join(sandbox.home, "fsmonitor-hook.pl");
    writeFileSync(hook, FSMONITOR_HOOK, { mode: 0o700 });
    const mark = path.join(sandbox.home, "watchman-lost");
    // Tokens: the client's own clock (it then says nothing changed), a daemon's, and git's own.
    for (const token of ["c:0:0:1:2", "c:1796495712:31282:1:4", "1796495712000000000"]) {
      rmSync(mark, { force: true });
      const run = spawnSync("perl", [hook, "watchman", r.dir, mark, "2", token], {
        env: { ...sandbox.env, ...env },
        encoding: "utf8",
      });
      expect(run.status, `${token}: ${JSON.stringify(run.stdout)}`).toBe(1);
      expect(existsSync(mark)).toBe(true);
    }
    expect(watchRoots(env)).toBeNull(); // the hook never starts the daemon
  });
});
