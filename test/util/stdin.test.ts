import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { agentHookEnv, installedCommand } from "../integrations/hook-helpers.js";

const DIST_STDIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/util/stdin.js");
const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

describe("a hook's event on stdin", () => {
  it("is seen when the process was kept from running past the wait (a loaded machine), the event there all along", () => {
    // The loader waits 10 ms for the event to decide whether to start the snapshot's status ahead.
    // A process off the CPU past that wait, its event written before it started, must still see it.
    const script = path.join(sandbox.home, "late.mjs");
    writeFileSync(
      script,
      `import { hookEventWithin } from ${JSON.stringify(DIST_STDIN)};
const pending = hookEventWithin(10);
for (const until = Date.now() + 40; Date.now() < until; ) {} // busy past the wait
process.stdout.write(JSON.stringify(await pending));
`,
    );
    const event = JSON.stringify({ session_id: "s", hook_event_name: "Stop", stop_hook_active: false });
    const run = spawnSync(process.execPath, [script], { input: event, encoding: "utf8", env: sandbox.env });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toBe(event);
  });

  it("is read from a pipe, a file or a socket, as agents give it; an agent that never closes stdin still gets its turn, and the hook ends", async () => {
    // Claude Code's UserPromptSubmit (code.claude.com/docs/en/hooks): session_id, transcript_path,
    // cwd, hook_event_name, prompt. The command is the one install writes, run as agents run it.
    const repo = sandbox.repo("given", { "a.txt": "a\n" });
    const event = (session: string) =>
      JSON.stringify({
        session_id: session,
        transcript_path: "/tmp/t.jsonl",
        cwd: repo.dir,
        hook_event_name: "UserPromptSubmit",
        prompt: "go",
      });
    const command = installedCommand("claude-code");
    writeFileSync(path.join(sandbox.home, "file.json"), event("file"));
    writeFileSync(path.join(sandbox.home, "pipe.json"), event("pipe"));
    const env = agentHookEnv(sandbox, { CLAUDE_PROJECT_DIR: repo.dir });
    const sh = (line: string, input?: string) =>
      spawnSync("/bin/sh", ["-c", line], { cwd: repo.dir, env, input, encoding: "utf8" });
    const runs = {
      file: sh(`${command} < '${sandbox.home}/file.json'`),
      pipe: sh(`cat '${sandbox.home}/pipe.json' | ${command}`),
      socket: sh(command, event("socket")), // Node's spawn gives stdin as a socket pair
    };
    for (const [how, run] of Object.entries(runs))
      expect([how, run.status, run.stdout, run.stderr]).toEqual([how, 0, "", ""]);
    // The event written, stdin never closed: the hook reads what came once its wait is over.
    const held = spawn("/bin/sh", ["-c", command], { cwd: repo.dir, env, stdio: ["pipe", "pipe", "pipe"] });
    held.stdin.write(event("held"));
    const status = await new Promise<number | null>((resolve) => {
      const killer = setTimeout(() => held.kill("SIGKILL"), 30_000);
      held.on("exit", (code) => {
        clearTimeout(killer);
        resolve(code);
      });
    });
    held.stdin.destroy();
    expect(status).toBe(0);
    const sessions = repo.ok("sessions").map((s: { session: string }) => s.session);
    expect(sessions.sort()).toEqual(["file", "held", "pipe", "socket"]);
  });
});
