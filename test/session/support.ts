import { afterAll } from "vitest";
import type { Workspace } from "../../src/workspace.js";
import type { TurnEnded } from "../../src/types.js";
import { openIn, snapshotIn } from "../helpers/in-process.js";
import { Repo, Sandbox } from "../helpers/repo.js";

export { openIn, snapshotIn };

/** One sandbox per test file; each test makes its own uniquely named repository or directory in it. */
export function sessionSandbox(): {
  sandbox: Sandbox;
  repo: (files?: Record<string, string>) => Repo;
  plain: (files?: Record<string, string>) => Repo;
} {
  const sandbox = new Sandbox();
  afterAll(() => sandbox.cleanup());
  let n = 0;
  return {
    sandbox,
    repo: (files = { "README.md": "hello\n" }) => sandbox.repo(`r${++n}`, files),
    plain: (files = {}) => {
      const dir = new Repo(sandbox, sandbox.dir(`plain${++n}`));
      dir.write(files);
      return dir;
    },
  };
}

/**
 * Runs one turn (begin, the agent's edits, end) through the library in this process, and returns
 * what `turn end --json` prints. Where a turn is a test's setting rather than its subject: the
 * command line's `turn` has tests of its own (test/cli, the hook tests), and a turn in-process
 * costs a fifth of two CLI runs.
 */
export async function turn(
  repo: Repo,
  session: string,
  id: string,
  edits: () => void,
  prompt = `prompt ${id}`,
): Promise<TurnEnded> {
  return libTurn(await openIn(repo.sandbox, repo.dir), session, id, edits, prompt);
}

/** Runs one turn through the library: begin, the agent's edits, end. */
export async function libTurn(
  ws: Workspace,
  session: string,
  id: string,
  edits: () => void,
  prompt = `prompt ${id}`,
): Promise<TurnEnded> {
  const handle = ws.session(session);
  await handle.beginTurn(id, { prompt });
  edits();
  return handle.endTurn(id);
}
