import { existsSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GhostcommitError, openWorkspace } from "../../src/index.js";
import { type Repo, Sandbox } from "../helpers/repo.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { ".gitignore": ".env\n", "README.md": "hi\n" });
  sandbox.applyToProcess();
});
afterEach(() => sandbox.cleanup());

/** How a library call ended: "code: message" of its GhostcommitError, or that it did not throw one. */
function codeAndMessage(run: () => Promise<unknown>): Promise<string> {
  return run().then(
    () => "no error",
    (e) => (e instanceof GhostcommitError ? `${e.code}: ${e.message}` : `not typed: ${String(e)}`),
  );
}

async function answersOf(calls: Record<string, () => Promise<unknown>>): Promise<Record<string, string>> {
  const answers: Record<string, string> = {};
  for (const [name, run] of Object.entries(calls)) answers[name] = await codeAndMessage(run);
  return answers;
}

describe("a workspace opened by the library", () => {
  it("refuses to capture the home directory, as the command line, hooks and MCP server do, making no store", async () => {
    const ws = await openWorkspace({ cwd: sandbox.home });
    const s = ws.session("s");
    const answers = await answersOf({
      snapshot: () => ws.snapshot(),
      diff: () => ws.diff("0000000"),
      restore: () => ws.restore("0000000"),
      beginTurn: () => s.beginTurn("1"),
      endTurn: () => s.endTurn("1"),
      touched: () => s.touched(["notes.md"]),
      rewind: () => s.rewind({ to: "1" }),
      redo: () => s.redo(),
    });
    const refused = `not-a-workspace: not snapshotting ${ws.root} (home or root directory): a snapshot there would hold everything you own; open a project directory instead`;
    for (const [name, answer] of Object.entries(answers)) expect(answer, name).toBe(refused);
    // Reading still works: there is nothing to read.
    expect([await ws.list(), await ws.sessions()]).toEqual([[], []]);
    expect(existsSync(path.join(sandbox.home, "data", "workspaces"))).toBe(false);
  });

  it("refuses to capture the root directory", async () => {
    const ws = await openWorkspace({ cwd: "/" });
    const answers = await answersOf({
      restore: () => ws.restore("0000000"),
      touched: () => ws.session("s").touched(["/nonexistent-ghostcommit-test"]),
    });
    for (const answer of Object.values(answers))
      expect(answer).toMatch(/^not-a-workspace: not snapshotting \/ \(home or root directory\)/);
  });

  it("refuses a session or turn id holding a NUL byte, whose snapshots were left out of every listing", async () => {
    const ws = await openWorkspace({ cwd: repo.dir });
    const answers = await answersOf({
      turn: () => ws.session("s").beginTurn("a\0b"),
      session: async () => ws.session("s\0x").beginTurn("1"),
      end: () => ws.session("s").endTurn("a\0b"),
      rewind: () => ws.session("s").rewind({ to: "a\0b" }),
    });
    expect(answers).toEqual({
      turn: 'usage: a turn id cannot hold a NUL byte: "a\\u0000b"',
      session: 'usage: a session id cannot hold a NUL byte: "s\\u0000x"',
      end: 'usage: a turn id cannot hold a NUL byte: "a\\u0000b"',
      rewind: 'usage: a turn id cannot hold a NUL byte: "a\\u0000b"',
    });
    expect([await ws.list(), await ws.sessions()]).toEqual([[], []]);
    // A prompt or a message may hold one: the snapshot is kept and listed all the same.
    const s = ws.session("s");
    const { before } = await s.beginTurn("1", { prompt: "fix\0this" });
    const snap = await ws.snapshot({ message: "mid\0way" });
    expect((await ws.list()).map((x) => [x.id, x.message])).toEqual([
      [snap.id, "mid\0way"],
      [before, "before turn 1: fix\0this"],
    ]);
  });

  it("sees settings written after it was opened: enabled false stops snapshots and turns until set back", async () => {
    const ws = await openWorkspace({ cwd: repo.dir });
    const first = await ws.snapshot();
    repo.write({ ".ghostcommit.json": '{"enabled": false}\n' });
    const disabled = `disabled: ${ws.root} is disabled (enabled: false)`;
    expect(ws.enabled).toBe(false);
    expect(
      await answersOf({ snapshot: () => ws.snapshot(), beginTurn: () => ws.session("s").beginTurn("1") }),
    ).toEqual({ snapshot: disabled, beginTurn: disabled });
    expect((await ws.list()).map((x) => x.id)).toEqual([first.id]);
    repo.write({ ".ghostcommit.json": '{"enabled": true}\n' });
    expect(ws.enabled).toBe(true);
    await ws.session("s").beginTurn("1");
    expect(await ws.list()).toHaveLength(2);
  });

  for (const store of ["shadow", "repo"] as const)
    it(`says a workspace deleted while open (${store} store) no longer exists, at every call, doing nothing`, async () => {
      const ws = await openWorkspace({ cwd: repo.dir, store });
      const s = ws.session("s");
      const { before } = await s.beginTurn("1");
      repo.write({ "README.md": "agent\n" });
      await s.endTurn("1");
      rmSync(repo.dir, { recursive: true, force: true });
      const answers = await answersOf({
        snapshot: () => ws.snapshot(),
        list: () => ws.list(),
        show: () => ws.show(before),
        restore: () => ws.restore(before),
        diff: () => ws.diff(before),
        diffBetween: () => ws.diff(before, before),
        beginTurn: () => ws.session("t").beginTurn("1"),
        endTurn: () => s.endTurn("1"),
        touched: () => s.touched(["README.md"]),
        rewind: () => s.rewind({ to: "1" }),
        redo: () => s.redo(),
        sessions: () => ws.sessions(),
        log: () => s.log(),
        doctor: () => ws.doctor(),
        gc: () => ws.gc(),
        drop: () => ws.drop([before]),
      });
      const gone = `not-a-workspace: ${ws.root} no longer exists (deleted or moved?): nothing was done there`;
      for (const [name, answer] of Object.entries(answers)) expect(answer, name).toBe(gone);
    });

  it("names its own options, not the command line's flags, in the advice of an error", async () => {
    const shadow = await openWorkspace({ cwd: repo.dir });
    const snap = await shadow.snapshot();
    const other = await openWorkspace({ cwd: repo.dir, store: "repo" });
    expect(await codeAndMessage(() => other.restore(snap.id))).toBe(
      `not-found: no snapshot ${snap.id} in this workspace's repo store; it is in its shadow store (\`openWorkspace({ store: "shadow" })\` reaches it)`,
    );
    const remote = path.join(sandbox.home, "remote.git");
    spawnSync("git", ["init", "-q", "--bare", remote], { env: sandbox.env });
    const s = shadow.session("s");
    await s.beginTurn("1");
    await s.touched([".env"]);
    repo.write({ ".env": "KEY=agent\n" });
    const { after } = await s.endTurn("1");
    expect(await codeAndMessage(() => shadow.push({ remote }))).toBe(
      `conflict: push refused: snapshots hold 1 file the repository or a .ghostignore ignores (.env), in snapshot ${after.slice(0, 12)} (after turn 1 of session s); nothing was sent, push({ includeIgnored: true }) sends them`,
    );
  });

  it("from a subdirectory's workspace, points at the repository's snapshots and sessions as the library reaches them", async () => {
    repo.write({ "src/app.ts": "1\n" });
    const top = await openWorkspace({ cwd: repo.dir });
    const snap = await top.snapshot();
    await top.session("s1").beginTurn("1");
    await top.session("s1").endTurn("1");
    const sub = await openWorkspace({ cwd: repo.path("src") });
    const reach = `openWorkspace({ cwd: ${JSON.stringify(repo.dir)} })`;
    expect(await codeAndMessage(() => sub.show(snap.id))).toContain(
      `(a subdirectory keeps its own snapshots: the repository's are reached with ${reach})`,
    );
    expect(await codeAndMessage(() => sub.session("s1").rewind({ to: "1" }))).toBe(
      `not-found: session s1 has no turns in ${sub.root} (a subdirectory keeps its own sessions: the repository's are reached with ${reach})`,
    );
  });

  it("refuses a signal that is no AbortSignal (the controller itself) before restoring anything", async () => {
    const ws = await openWorkspace({ cwd: repo.dir });
    const snap = await ws.snapshot();
    repo.write({ "keep-me.txt": "mine\n" });
    const controller = new AbortController();
    controller.abort();
    const session = ws.session("s");
    const wrong = "usage: restore: signal must be an AbortSignal (an AbortController's .signal)";
    for (const signal of [controller, "x"] as unknown as AbortSignal[]) {
      expect(await codeAndMessage(() => ws.restore(snap.id, { signal }))).toBe(wrong);
      expect(await codeAndMessage(() => session.rewind({ to: "1", signal }))).toBe(
        wrong.replace("restore", "rewind"),
      );
      expect(await codeAndMessage(() => session.redo({ signal }))).toBe(wrong.replace("restore", "redo"));
    }
    expect(repo.read("keep-me.txt")).toBe("mine\n");
    expect(await codeAndMessage(() => ws.restore(snap.id, { signal: controller.signal }))).toBe(
      "cancelled: cancelled before any file was changed",
    );
    expect(await codeAndMessage(() => ws.push({ "include-ignored": true } as never))).toBe(
      'usage: push: unknown option "include-ignored" (did you mean includeIgnored?)',
    );
    expect(await codeAndMessage(() => ws.gc({ keep: "3" as unknown as number }))).toBe(
      'usage: keep must be a whole number ≥ 0, not "3"',
    );
  });
});
