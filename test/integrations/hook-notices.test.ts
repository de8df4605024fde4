import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents as claude, codex, cursor, gemini } from "./events.js";
import { appWithSecret, installedCommand, shellHook } from "./hook-helpers.js";

// Agents keep a hook's stderr out of the user's sight (Claude Code: only in its debug log), so a
// Watchman watch a hook event starts is told in that event's answer, as the `systemMessage` the
// agent shows the user. Cursor's answers have no such field.
const watchmanInstalled = spawnSync("watchman", ["--version"]).status === 0;
const it = watchmanInstalled ? test : test.skip; // skipped: Watchman is not installed

let sandbox: Sandbox;
let repo: Repo;
let configHome: string;
beforeEach(() => {
  ({ sandbox, repo } = appWithSecret());
  configHome = path.join(sandbox.home, "agent-config");
  mkdirSync(path.join(configHome, "ghostcommit"), { recursive: true });
  writeFileSync(path.join(configHome, "ghostcommit", "config.json"), JSON.stringify({ watchman: true }));
});
afterEach(() => {
  spawnSync("watchman", ["--no-spawn", "watch-del", repo.dir]);
  sandbox.cleanup();
});

/** One event through the installed command, run as the agent runs it; its stdout. */
function send(agent: string, event: unknown): string {
  const result = shellHook(sandbox, installedCommand(agent), event, repo.dir, {
    XDG_CONFIG_HOME: configHome,
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim();
}

function watched(): boolean {
  const list = spawnSync("watchman", ["--no-spawn", "watch-list"], { encoding: "utf8" });
  return list.status === 0 && (JSON.parse(list.stdout).roots as string[]).includes(repo.dir);
}

const NOTICE = "Watchman now watches";

describe("announcements from hook events reach the user", () => {
  it.each([
    {
      agent: "claude-code",
      begin: claude.prompt(".", "s1", "go"),
      end: claude.stop(".", "s1"),
      quiet: "",
    },
    {
      agent: "codex",
      begin: codex(".", "s1", "UserPromptSubmit", { turn_id: "t1", prompt: "go" }),
      end: codex(".", "s1", "Stop", { turn_id: "t1", stop_hook_active: false, last_assistant_message: "ok" }),
      quiet: "",
    },
    {
      agent: "gemini",
      begin: gemini(".", "s1", "BeforeAgent", { prompt: "go" }),
      end: gemini(".", "s1", "AfterAgent", { prompt: "go", prompt_response: "ok", stop_hook_active: false }),
      quiet: "{}",
    },
  ])(
    "$agent: the watch a turn's snapshot started is told once, in that event's answer",
    ({ agent, begin, end, quiet }) => {
      const at = (event: object) => ({ ...event, cwd: repo.dir });
      const told = JSON.parse(send(agent, at(begin)));
      expect(watched()).toBe(true);
      expect(told.systemMessage).toContain(`ghostcommit: ${NOTICE} ${repo.dir}`);
      expect(told.systemMessage).toContain("watchman watch-del");
      expect(Object.keys(told)).toEqual(["systemMessage"]);
      repo.write({ "src/app.js": "v1\n" });
      expect(send(agent, at(end))).toBe(quiet); // told once
      expect(send(agent, at(begin))).toBe(quiet);
      const doctor = sandbox.cli(repo.dir, ["doctor", "--json"], undefined, { XDG_CONFIG_HOME: configHome });
      expect(doctor.json.watchman).toMatchObject({ inUse: true, startedWatch: repo.dir });
    },
  );

  it("cursor: its answers stay exactly what Cursor expects; the notice goes to stderr", () => {
    const begin = cursor(repo.dir, "c1", "beforeSubmitPrompt", { prompt: "go", attachments: [] });
    const result = shellHook(sandbox, installedCommand("cursor"), begin, repo.dir, {
      XDG_CONFIG_HOME: configHome,
    });
    expect(result.stdout.trim()).toBe(JSON.stringify({ continue: true }));
    expect(result.stderr).toContain(NOTICE);
    expect(watched()).toBe(true);
  });

  it("a terminal command says it on stderr, and no hook repeats it", () => {
    const result = sandbox.cli(repo.dir, ["snapshot", "--json"], undefined, { XDG_CONFIG_HOME: configHome });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(`ghostcommit: ${NOTICE}`);
    expect(send("claude-code", claude.prompt(repo.dir, "s2", "go"))).toBe("");
    expect(send("claude-code", claude.stop(repo.dir, "s2"))).toBe("");
  });
});
