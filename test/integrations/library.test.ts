import { spawnSync } from "node:child_process";
import { renameSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GhostcommitError, openWorkspace } from "../../src/index.js";
import type { Snapshot, SessionHandle, SnapshotTaken } from "../../src/index.js";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { ".gitignore": ".env\n", "README.md": "hi\n" });
  repo.write({ ".env": "KEY=user\n" });
});
afterEach(() => sandbox.cleanup());

/** Runs a script inside the package, so `import "ghostcommit"` resolves to the built package. */
function runScript(script: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [path.join(HERE, "fixtures", script), ...args], {
    env: sandbox.env,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`${script} exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** How a library call ended: "code: message" of its GhostcommitError, or that it did not throw one. */
function codeAndMessage(run: () => Promise<unknown>): Promise<string> {
  return run().then(
    () => "no error",
    (e) => (e instanceof GhostcommitError ? `${e.code}: ${e.message}` : `not typed: ${String(e)}`),
  );
}

describe('import { openWorkspace } from "ghostcommit"', () => {
  it("runs the README's agent loop: turns, touched ignored files, rewind, typed errors, redo", () => {
    const out = runScript("agent-loop.mjs", repo.dir);
    expect(out.changed).toEqual([["notes.md"], [".env"], ["notes.md"]]);
    expect(out.rewoundTurns).toEqual(["2", "3"]);
    expect(out.afterRewind).toEqual(["1:done", "2:rewound", "3:rewound"]);
    expect(out.undone).toEqual(["rewind:2,3"]);
    expect(out.errorCode).toBe("not-found");
    expect(out.restoredTurns).toEqual(["2", "3"]);
    expect(repo.read("notes.md")).toBe("turn 3\n");
    expect(repo.read(".env")).toBe("KEY=agent\n");
  });

  it("gives typed results and GhostcommitError with stable codes", async () => {
    sandbox.applyToProcess();
    const ws = await openWorkspace({ cwd: repo.dir });
    const snap: Snapshot = await ws.snapshot({ message: "typed", include: [".env"] });
    expect(snap.fileCount).toBe(3);
    // As the command line's JSON says it: a typo in an include captures nothing, and is named.
    const typo: SnapshotTaken = await ws.snapshot({ include: [".env", ".env.locl"] });
    expect(typo.missingIncludes).toEqual([".env.locl"]);
    expect("missingIncludes" in snap).toBe(false);
    const session: SessionHandle = ws.session("typed");
    expect(await session.openTurn()).toBeNull();
    await expect(ws.snapshot({ include: ["../outside"] })).rejects.toSatisfy(
      (e) => e instanceof GhostcommitError && e.code === "outside-workspace",
    );
    await expect(ws.diff("zzzzzzz")).rejects.toBeInstanceOf(GhostcommitError);
  });

  it("refuses bad arguments as the command line does, with a GhostcommitError, before doing anything", async () => {
    sandbox.applyToProcess();
    const code = (e: unknown) => (e instanceof GhostcommitError ? e.code : `not typed: ${String(e)}`);
    const caught = (run: () => Promise<unknown>) => run().then(() => "no error", code);
    // A typo must not quietly pick the other store.
    for (const store of ["Repo", "bogus", 5]) {
      expect(await caught(() => openWorkspace({ cwd: repo.dir, store: store as never }))).toBe("usage");
    }
    const ws = await openWorkspace({ cwd: repo.dir });
    const kept = await ws.snapshot();
    for (const keep of [-1, 1.5, Number.NaN]) expect(await caught(() => ws.gc({ keep }))).toBe("usage");
    expect(await caught(() => ws.gc({ olderThanMs: -5 }))).toBe("usage");
    expect((await ws.list()).map((s) => s.id)).toEqual([kept.id]); // gc({keep: -1}) had dropped it
    expect(await caught(() => ws.restore(undefined as never))).toBe("bad-id");
    expect(await caught(() => ws.session("s").touched("README.md" as never))).toBe("usage");
    // Wrong shapes an embedding host may pass (untyped JavaScript): usage errors, nothing done.
    expect(await caught(() => ws.snapshot({ include: "README.md" as never }))).toBe("usage");
    expect(await caught(() => ws.snapshot({ include: [1] as never }))).toBe("usage");
    expect(await caught(() => ws.snapshot({ message: 5 as never }))).toBe("usage");
    // Each names what is wrong: a message that is not a string is no fault of include.
    await expect(ws.snapshot({ message: 5 as never })).rejects.toThrow("snapshot: message must be a string");
    await expect(ws.snapshot({ include: "README.md" as never })).rejects.toThrow(
      "snapshot: include must be a list of paths",
    );
    expect(await caught(() => ws.drop(kept.id as never))).toBe("usage");
    expect(await caught(() => ws.undoneSinceLastTurn(undefined as never))).toBe("usage");
    // A directory passed alone would have opened the current directory instead.
    expect(await caught(() => openWorkspace(repo.dir as never))).toBe("usage");
    expect((await ws.list()).map((s) => s.id)).toEqual([kept.id]);
  });

  it("refuses null options, flags that are not booleans and paths holding a NUL byte, doing nothing", async () => {
    sandbox.applyToProcess();
    const ws = await openWorkspace({ cwd: repo.dir });
    const kept = await ws.snapshot();
    const s = ws.session("s");
    const refusals = {
      "beginTurn prompt": () => s.beginTurn("1", { prompt: 5 as never }),
      "beginTurn null": () => s.beginTurn("1", null as never),
      "progress string": () => s.progress("README.md" as never),
      "touched mark": () => s.touched(["README.md"], { mark: "during" as never }),
      "snapshot null": () => ws.snapshot(null as never),
      "gc null": () => ws.gc(null as never),
      "redo null": () => s.redo(null as never),
      "restore null": () => ws.restore(kept.id, null as never),
      "restore dryRun": () => ws.restore(kept.id, { dryRun: "yes" as never }),
      "rewind force": () => s.rewind({ to: "1", force: "no" as never }),
      "push sessions": () => ws.push({ sessions: "s" as never }),
      "diffText format": () => ws.diffText("bogus" as never, kept.id),
      "include NUL": () => ws.snapshot({ include: ["a\0b"] }),
      "include empty": () => ws.snapshot({ include: [""] }),
      "restore path NUL": () => ws.restore(kept.id, { paths: ["README.md\0../../etc"] }),
    };
    const answers = Object.fromEntries(
      await Promise.all(
        Object.entries(refusals).map(async ([name, run]) => [name, await codeAndMessage(run)]),
      ),
    );
    for (const [name, answer] of Object.entries(answers)) expect(answer, name).toMatch(/^usage: /);
    expect(answers["restore dryRun"]).toBe("usage: restore: dryRun must be true or false");
    expect(answers["touched mark"]).toBe('usage: touched: mark must be "before" or "after"');
    expect(answers["include NUL"]).toBe('usage: a path cannot hold a NUL byte: "a\\u0000b"');
    expect((await ws.list()).map((x) => x.id)).toEqual([kept.id]);
    expect(await s.log()).toEqual([]);
  });

  it("refuses a misspelled option instead of doing the default: a dryrun typo wrote the files", async () => {
    sandbox.applyToProcess();
    const ws = await openWorkspace({ cwd: repo.dir });
    const s = ws.session("s");
    const { before } = await s.beginTurn("1");
    repo.write({ "README.md": "agent\n" });
    await s.endTurn("1");
    const typos = {
      restore: () => ws.restore(before, { paths: ["README.md"], dryrun: true } as never),
      rewind: () => s.rewind({ to: "1", dryrun: true } as never),
      redo: () => s.redo({ DryRun: true } as never),
      snapshot: () => ws.snapshot({ includes: [".env"] } as never),
      diff: () => ws.diff(before, undefined, { path: ["README.md"] } as never),
      gc: () => ws.gc({ keeps: 1 } as never),
      openWorkspace: () => openWorkspace({ cwd: repo.dir, stor: "repo" } as never),
    };
    const answers: Record<string, string> = {};
    for (const [name, run] of Object.entries(typos)) answers[name] = await codeAndMessage(run);
    expect(answers).toEqual({
      restore: 'usage: restore: unknown option "dryrun" (did you mean dryRun?)',
      rewind: 'usage: rewind: unknown option "dryrun" (did you mean dryRun?)',
      redo: 'usage: redo: unknown option "DryRun" (did you mean dryRun?)',
      snapshot: 'usage: snapshot: unknown option "includes" (it takes include, message)',
      diff: 'usage: diff: unknown option "path" (it takes paths)',
      gc: 'usage: gc: unknown option "keeps" (it takes olderThanMs, keep)',
      openWorkspace: 'usage: openWorkspace: unknown option "stor" (it takes cwd, store)',
    });
    expect(repo.read("README.md")).toBe("agent\n");
    expect((await s.log()).map((t) => t.state)).toEqual(["done"]);
    expect(await ws.list()).toHaveLength(2);
  });

  it("refuses what would silently widen or skip a check: a misspelled key of expect, paths: [], cwd: '', doctor's options", async () => {
    sandbox.applyToProcess();
    const ws = await openWorkspace({ cwd: repo.dir });
    const s = ws.session("s");
    const { before } = await s.beginTurn("1");
    repo.write({ "README.md": "agent\n", "new.txt": "n\n" });
    await s.endTurn("1");
    const plan = await s.rewind({ to: "1", dryRun: true });
    const { deleted: _, ...rest } = plan;
    const refusals = {
      rewindExpect: () => s.rewind({ to: "1", expect: { ...rest, deleteed: [] } as never }),
      restoreNone: () => ws.restore(before, { paths: [] }),
      diffNone: () => ws.diff(before, undefined, { paths: [] }),
      rewindNone: () => s.rewind({ to: "1", paths: [] }),
      emptyCwd: () => openWorkspace({ cwd: "" }),
      doctorRepair: () => ws.doctor({ repair: "no" } as never),
      doctorChecks: () => ws.doctor({ checks: "x" } as never),
    };
    const answers: Record<string, string> = {};
    for (const [name, run] of Object.entries(refusals)) answers[name] = await codeAndMessage(run);
    const none = "usage: paths is an empty list: leave it out to act on every path";
    expect(answers).toEqual({
      rewindExpect: expect.stringMatching(
        /^usage: expect: unknown option "deleteed" \(it takes .*\bdeleted\b/,
      ),
      restoreNone: none,
      diffNone: none,
      rewindNone: none,
      emptyCwd: "usage: cwd is empty: leave it out for the current directory",
      doctorRepair: "usage: doctor: repair must be true or false",
      doctorChecks: "usage: doctor: checks must be a list of functions",
    });
    expect([repo.read("README.md"), repo.exists("new.txt")]).toEqual(["agent\n", true]);
    // The plan as it was sent back is taken, and the rewind goes ahead.
    expect((await s.rewind({ to: "1", expect: plan })).rewoundTurns).toEqual(["1"]);
    const redoPlan = await s.redo({ dryRun: true });
    expect(await codeAndMessage(() => s.redo({ expect: { ...redoPlan, writen: [] } as never }))).toMatch(
      /^usage: expect: unknown option "writen"/,
    );
  });

  it("resolves a touched relative path against the workspace it was opened with, wherever the process moves after", async () => {
    sandbox.applyToProcess();
    const saved = process.cwd();
    try {
      process.chdir(path.dirname(repo.dir));
      const ws = await openWorkspace({ cwd: path.basename(repo.dir) });
      process.chdir(repo.dir);
      const s = ws.session("t");
      await s.beginTurn("1");
      expect(await s.touched([".env"])).toEqual({ touched: [".env"] });
      repo.write({ ".env": "KEY=agent\n" });
      await s.endTurn("1");
      await s.rewind({ to: "1" });
      expect(repo.read(".env")).toBe("KEY=user\n");
    } finally {
      process.chdir(saved);
    }
  });

  it("says a workspace moved or deleted while open, or a deleted current directory, is gone", async () => {
    sandbox.applyToProcess();
    const ws = await openWorkspace({ cwd: repo.dir });
    await ws.snapshot();
    const moved = `${repo.dir}-moved`;
    renameSync(repo.dir, moved);
    try {
      for (const run of [() => ws.snapshot(), () => ws.session("s").beginTurn("1")]) {
        const error = await run().catch((e) => e);
        expect([error.code, error.message]).toEqual([
          "not-a-workspace",
          `${repo.dir} no longer exists (deleted or moved?): nothing was done there`,
        ]);
      }
    } finally {
      renameSync(moved, repo.dir);
    }
    // A current directory deleted under the process (Node cannot even name it).
    const gone = sandbox.dir("gone");
    const script = `process.chdir(${JSON.stringify(gone)}); require("fs").rmdirSync(${JSON.stringify(gone)});
      import(${JSON.stringify(pathToFileURL(path.resolve(HERE, "../../dist/index.js")).href)})
        .then((m) => m.openWorkspace()).catch((e) => console.log(e.code, e.message));`;
    const run = spawnSync(process.execPath, ["-e", script], { env: sandbox.env, encoding: "utf8" });
    expect(run.stdout.trim()).toBe(
      "not-a-workspace the current directory no longer exists (deleted or moved?): change to the workspace, or name it",
    );
    // The command line's snapshot there started a status ahead of the bundle, which threw.
    const goneToo = sandbox.dir("gone-too");
    const shell = `cd '${goneToo}' && rmdir '${goneToo}' && exec '${process.execPath}' '${CLI}' snapshot`;
    const cli = spawnSync("/bin/sh", ["-c", shell], { env: sandbox.env, encoding: "utf8" });
    expect([cli.status, cli.stderr]).toEqual([
      1,
      "ghostcommit: the current directory no longer exists (deleted or moved?): change to the workspace, or name it\n",
    ]);
  });
});
