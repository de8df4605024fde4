import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { gemini } from "./events.js";
import { expectQuiet, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

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

const log = (session: string): Promise<any[]> => logIn(repo, session);

/** Runs the command installed under `event` (its last group's first hook), as Gemini CLI does. */
function send(session: string, event: string, extra: Record<string, unknown> = {}): void {
  const command = settings.hooks[event].at(-1).hooks[0].command;
  const env = { GEMINI_PROJECT_DIR: repo.dir, GEMINI_CWD: repo.dir, GEMINI_SESSION_ID: session };
  expectQuiet(shellHook(sandbox, command, gemini(repo.dir, session, event, extra), repo.dir, env), "{}");
}

describe("Gemini CLI's relative paths", () => {
  // Found in a trial: a relative file_path sent with a cwd below the project was resolved against
  // that cwd, so the agent's edit of mod.py was doubted and a person's save of pkg/mod.py, made
  // meanwhile, taken for the agent's and rewound without a word. Gemini's file tools resolve a
  // relative path against the directory it was started in (docs/tools/file-system.md: "resolved
  // relative to this root directory"), whatever the shell's cd.
  it("are the project's, not the shell's directory's", async () => {
    repo.write({ "mod.py": "m0\n", "pkg/mod.py": "p0\n" });
    repo.git("add", ".");
    repo.git("commit", "-qm", "modules");
    const pkg = repo.path("pkg");
    const fromPkg = (session: string, event: string, extra: Record<string, unknown>) => {
      const command = settings.hooks[event].at(-1).hooks[0].command;
      const env = { GEMINI_PROJECT_DIR: repo.dir, GEMINI_CWD: repo.dir, GEMINI_SESSION_ID: session };
      expectQuiet(shellHook(sandbox, command, gemini(pkg, session, event, extra), pkg, env), "{}");
    };
    send("rel", "BeforeAgent", { prompt: "bump the module" });
    const replace = {
      tool_name: "replace",
      tool_input: { file_path: "mod.py", old_string: "m0", new_string: "m1" },
    };
    fromPkg("rel", "BeforeTool", replace);
    repo.write({ "mod.py": "m1\n" });
    repo.write({ "pkg/mod.py": "the person's save\n" });
    fromPkg("rel", "AfterTool", { ...replace, tool_response: { llmContent: "ok" } });
    send("rel", "AfterAgent", { prompt: "bump the module", prompt_response: "ok", stop_hook_active: false });
    const [turn] = await log("rel");
    expect([turn.changed, turn.uncertain]).toEqual([["mod.py", "pkg/mod.py"], ["pkg/mod.py"]]);
    const refused = repo.cli(["rewind", "--session", "rel", "--to", "1", "--json"]);
    expect([refused.status, refused.json.conflicts]).toEqual([3, ["pkg/mod.py"]]);
    expect(repo.read("pkg/mod.py")).toBe("the person's save\n");
  });
});

describe("Gemini CLI SessionEnd", () => {
  it("takes a turn left open by Ctrl-C as over once /clear ends its session", async () => {
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
    expect((await log("NEW"))[0]).toMatchObject({ changed: ["docs/gen.md"] });
    expect((await log("NEW"))[0].uncertain ?? []).toEqual([]);
    const rewound = repo.cli(["rewind", "--session", "NEW", "--to", "1"]);
    expect(rewound.status, rewound.stderr).toBe(0);
    expect(repo.exists("docs/gen.md")).toBe(false);
    // No snapshot at SessionEnd (exit does not wait for it): OLD's turn stays as an interrupt left it.
    expect((await log("OLD"))[0]).toMatchObject({ turn: "1", state: "open", after: null });
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

describe("Gemini CLI AfterAgent retry", () => {
  it("keeps the work of a retry another AfterAgent hook asked for in the turn of the user's prompt", async () => {
    // gemini-cli 926dddf0 (v0.35.0), client.ts sendMessageStream: when an AfterAgent hook blocks,
    // "Reset hook state so the continuation fires BeforeAgent fresh" with the hook's reason as the
    // request, then the continuation's AfterAgent carries `stopHookActive: true` ("signal retry to
    // AfterAgent hooks") and the original prompt (`hookState.originalRequest`).
    send("g1", "BeforeAgent", { prompt: "implement feature X" });
    repo.write({ "feature.js": "feature\n" });
    send("g1", "AfterTool", { tool_name: "run_shell_command", tool_input: { command: "node scaffold.js" } });
    send("g1", "AfterAgent", {
      prompt: "implement feature X",
      prompt_response: "done",
      stop_hook_active: false,
    });
    send("g1", "BeforeAgent", { prompt: "Tests fail: fix src/app.js" });
    const write = {
      tool_name: "write_file",
      tool_input: { file_path: repo.path("src/app.js"), content: "v1" },
    };
    send("g1", "BeforeTool", write);
    repo.write({ "src/app.js": "v1\n" });
    send("g1", "AfterTool", write);
    send("g1", "AfterAgent", {
      prompt: "implement feature X",
      prompt_response: "fixed",
      stop_hook_active: true,
    });
    expect((await log("g1")).map((t) => [t.turn, t.state, t.prompt, [...t.changed].sort()])).toEqual([
      ["1", "done", "implement feature X", ["feature.js", "src/app.js"]],
    ]);
    repo.ok("rewind", "--session", "g1", "--to", "1");
    expect(repo.exists("feature.js")).toBe(false);
    expect(repo.read("src/app.js")).toBe("v0\n");
  });

  it("leaves a new prompt's turn its own when its stop is a plain one", async () => {
    send("g2", "BeforeAgent", { prompt: "same words" });
    send("g2", "AfterAgent", { prompt: "same words", prompt_response: "ok", stop_hook_active: false });
    send("g2", "BeforeAgent", { prompt: "other words" });
    repo.write({ "b.txt": "b\n" });
    send("g2", "AfterAgent", { prompt: "other words", prompt_response: "ok", stop_hook_active: false });
    expect((await log("g2")).map((t) => [t.turn, t.changed])).toEqual([
      ["1", []],
      ["2", ["b.txt"]],
    ]);
  });
});

describe("Gemini CLI switches", () => {
  it("install and doctor say when Gemini's hooksConfig keeps the hooks from running", () => {
    // settingsSchema.ts: hooksConfig.enabled "When disabled, no hooks will be executed";
    // hooksConfig.disabled "Hooks in this list will not execute even if configured" (merged as a
    // union across settings files); hookRegistry.ts matches a hook's `name`, else its `command`.
    const user = path.join(sandbox.home, ".gemini", "settings.json");
    const project = repo.path(".gemini/settings.json");
    mkdirSync(path.dirname(user), { recursive: true });
    writeFileSync(user, JSON.stringify({ hooksConfig: { enabled: false } }));
    const off = `Gemini CLI runs no hooks: "hooksConfig": {"enabled": false} in ${user}, so ghostcommit records no turn (set it to true for undo)`;
    const userInstall = repo.ok("install", "gemini");
    expect(userInstall.warnings).toEqual([off]);
    // What only a project's settings need is said of a project install only.
    expect(userInstall.notes).toEqual(["Older Gemini CLI builds need `tools.enableHooks: true`."]);
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([
      { code: "hook-switched-off", message: off },
    ]);
    // The project's switch overrides the user's; `/hooks disable ghostcommit-end` lists it.
    writeFileSync(
      project,
      JSON.stringify({ ...settings, hooksConfig: { enabled: true, disabled: ["ghostcommit-end"] } }),
    );
    const skipped = `Gemini CLI skips ghostcommit-end: "hooksConfig": {"disabled": [...]} in ${project} names it, so ghostcommit misses those events (turns not begun, or left open with their edits uncertain); remove it from the list, or use /hooks enable in Gemini CLI`;
    expect(repo.ok("install", "gemini", "--project").warnings).toEqual([skipped]);
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([
      { code: "hook-switched-off", message: skipped },
    ]);
    writeFileSync(project, JSON.stringify(settings));
    writeFileSync(user, JSON.stringify({ hooksConfig: { enabled: true, disabled: ["my-linter"] } }));
    expect(repo.ok("install", "gemini", "--project").warnings).toEqual([]);
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([]);
  });
});
