import { afterAll } from "vitest";
import { openWorkspace, type Workspace } from "../../src/workspace.js";
import type { TurnEnded } from "../../src/types.js";
import { Repo, Sandbox } from "../helpers/repo.js";

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

/** Runs one turn through the CLI: begin, the agent's edits, end. Returns `turn end`'s JSON. */
export function turn(
  repo: Repo,
  session: string,
  id: string,
  edits: () => void,
  prompt = `prompt ${id}`,
): any {
  repo.ok("turn", "begin", "--session", session, "--turn", id, "--prompt", prompt);
  edits();
  return repo.ok("turn", "end", "--session", session, "--turn", id);
}

/** Runs one turn through the library: begin, the agent's edits, end. */
export async function libTurn(
  ws: Workspace,
  session: string,
  id: string,
  edits: () => void,
): Promise<TurnEnded> {
  const handle = ws.session(session);
  await handle.beginTurn(id, { prompt: `prompt ${id}` });
  edits();
  return handle.endTurn(id);
}

/** Opens a workspace in-process with the sandbox's hermetic environment. */
export async function openIn(sandbox: Sandbox, dir: string): Promise<Workspace> {
  sandbox.applyToProcess();
  return openWorkspace({ cwd: dir });
}
