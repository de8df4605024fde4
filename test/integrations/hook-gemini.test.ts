import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { gemini } from "./events.js";
import { expectQuiet, shellHook } from "./hook-helpers.js";

/**
 * Gemini CLI through the hooks `install gemini` writes, run as Gemini runs them
 * (packages/core/src/hooks/hookRunner.ts: `/bin/sh -c` in `input.cwd`, GEMINI_PROJECT_DIR = cwd).
 */
let sandbox: Sandbox;
let repo: Repo;
let settings: any;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { ".gitignore": ".gemini/\n", "src/app.js": "v0\n" });
  settings = JSON.parse(readFileSync(repo.ok("install", "gemini", "--project").file, "utf8"));
});
afterEach(() => sandbox.cleanup());

const log = (session: string): any[] => repo.ok("log", "--session", session);

/** Runs the command installed under `event` (its last group's first hook), as Gemini CLI does. */
function send(session: string, event: string, extra: Record<string, unknown> = {}): void {
  const command = settings.hooks[event].at(-1).hooks[0].command;
  const env = { GEMINI_PROJECT_DIR: repo.dir, GEMINI_CWD: repo.dir, GEMINI_SESSION_ID: session };
  expectQuiet(shellHook(sandbox, command, gemini(repo.dir, session, event, extra), repo.dir, env), "{}");
}

describe("Gemini CLI SessionEnd", () => {
  it("takes a turn left open by Ctrl-C as over once /clear ends its session", () => {
    // Ctrl-C fires no AfterAgent (client.ts: the abort path returns before it); /clear then awaits
    // fireSessionEndEvent(SessionEndReason.Clear) and starts a new session id (clearCommand.ts).
    // docs/hooks/reference.md: "SessionEnd: Fires when the CLI exits or a session is cleared",
    // input `reason`: "exit" | "clear" | "logout" | "prompt_input_exit" | "other".
    send("OLD", "BeforeAgent", { prompt: "first try" });
    const write = {
      tool_name: "write_file",
      tool_input: { file_path: repo.path("src/app.js"), content: "old" },
    };
    send("OLD", "BeforeTool", write);
    repo.write({ "src/app.js": "old\n" });
    send("OLD", "AfterTool", write);
    send("OLD", "SessionEnd", { reason: "clear" });
    send("NEW", "BeforeAgent", { prompt: "generate the docs" });
    repo.write({ "docs/gen.md": "gen\n" });
    send("NEW", "AfterTool", {
      tool_name: "run_shell_command",
      tool_input: { command: "./gen > docs/gen.md" },
    });
    send("NEW", "AfterAgent", {
      prompt: "generate the docs",
      prompt_response: "ok",
      stop_hook_active: false,
    });
    expect(log("NEW")[0]).toMatchObject({ changed: ["docs/gen.md"] });
    expect(log("NEW")[0].uncertain ?? []).toEqual([]);
    const rewound = repo.cli(["rewind", "--session", "NEW", "--to", "1"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect(repo.exists("docs/gen.md")).toBe(false);
    // No snapshot at SessionEnd (exit does not wait for it): OLD's turn stays as an interrupt left it.
    expect(log("OLD")[0]).toMatchObject({ turn: "1", state: "open", after: null });
  });

  it("is registered by install, and doctor tells an install from before it", () => {
    const file = repo.path(".gemini/settings.json");
    expect(settings.hooks.SessionEnd).toEqual([
      {
        hooks: [
          { ...settings.hooks.AfterAgent[0].hooks[0], name: "ghostcommit-session-end", timeout: 10000 },
        ],
      },
    ]);
    delete settings.hooks.SessionEnd;
    writeFileSync(file, JSON.stringify(settings, null, 2));
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([
      expect.objectContaining({
        code: "hook-install-outdated",
        message: `the Gemini CLI hooks in ${file} lack SessionEnd; run \`ghostcommit install gemini --project\` again`,
      }),
    ]);
    expect(repo.ok("install", "gemini", "--project")).toMatchObject({
      changed: true,
      events: ["SessionEnd"],
    });
  });
});
