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
});
