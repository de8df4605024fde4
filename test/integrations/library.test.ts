import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GhostcommitError, openWorkspace } from "../../src/index.js";
import type { Snapshot, SessionHandle } from "../../src/index.js";
import { type Repo, Sandbox } from "../helpers/repo.js";

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
    expect(await caught(() => ws.drop(kept.id as never))).toBe("usage");
    expect(await caught(() => ws.undoneSinceLastTurn(undefined as never))).toBe("usage");
    // A directory passed alone would have opened the current directory instead.
    expect(await caught(() => openWorkspace(repo.dir as never))).toBe("usage");
    expect((await ws.list()).map((s) => s.id)).toEqual([kept.id]);
  });

  it("refuses null options, flags that are not booleans and paths holding a NUL byte, doing nothing", async () => {
    sandbox.applyToProcess();
    const caught = (run: () => Promise<unknown>) =>
      run().then(
        () => "no error",
        (e) => (e instanceof GhostcommitError ? `${e.code}: ${e.message}` : `not typed: ${String(e)}`),
      );
    const ws = await openWorkspace({ cwd: repo.dir });
    const kept = await ws.snapshot();
    const s = ws.session("s");
    const refusals = {
      "beginTurn prompt": () => s.beginTurn("1", { prompt: 5 as never }),
      "beginTurn null": () => s.beginTurn("1", null as never),
      "progress string": () => s.progress("README.md" as never),
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
      await Promise.all(Object.entries(refusals).map(async ([name, run]) => [name, await caught(run)])),
    );
    for (const [name, answer] of Object.entries(answers)) expect(answer, name).toMatch(/^usage: /);
    expect(answers["restore dryRun"]).toBe("usage: restore: dryRun must be true or false");
    expect(answers["include NUL"]).toBe('usage: a path cannot hold a NUL byte: "a\\u0000b"');
    expect((await ws.list()).map((x) => x.id)).toEqual([kept.id]);
    expect(await s.log()).toEqual([]);
  });
});
