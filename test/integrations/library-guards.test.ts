import { existsSync } from "node:fs";
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
});
