import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { codex, updatePatch as patch } from "./events.js";
import { hookLogs, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

// A name that starts with two dots (`..env.local`, `..secrets`) is a file inside the workspace: only
// a whole ".." component climbs out of it. Codex reports an apply_patch call as `tool_name:
// "apply_patch"` with the patch in `tool_input.command` (developers.openai.com/codex/hooks,
// openai/codex#16732), its paths relative to the event's `cwd`.

let sandbox: Sandbox;
let repo: Repo;
let command: string;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { ".gitignore": "..env.local\n*.secrets\n", "app.js": "v0\n" });
  repo.write({ "..env.local": "TOKEN=orig\n", "cfg/..app.secrets": "S=orig\n" });
  repo.ok("install", "codex", "--project");
  const hooks = JSON.parse(readFileSync(repo.path(".codex/hooks.json"), "utf8"));
  command = hooks.hooks.UserPromptSubmit[0].hooks[0].command;
});
afterEach(() => sandbox.cleanup());

describe("an ignored file whose name starts with `..`", () => {
  it("edited by apply_patch is captured as a workspace path, and a rewind puts it back", async () => {
    const send = (event: unknown) => {
      const run = shellHook(sandbox, command, event, repo.dir);
      expect([run.status, run.stdout, run.stderr]).toEqual([0, "", ""]);
    };
    send(codex(repo.dir, "s", "UserPromptSubmit", { turn_id: "turn-1", prompt: "rotate the token" }));
    for (const [file, from, to] of [
      ["..env.local", "TOKEN=orig", "TOKEN=agent"],
      ["cfg/..app.secrets", "S=orig", "S=agent"],
    ]) {
      const call = {
        turn_id: "turn-1",
        tool_name: "apply_patch",
        tool_use_id: "call_1",
        tool_input: { command: patch(file, from, to) },
      };
      send(codex(repo.dir, "s", "PreToolUse", call));
      repo.write({ [file]: `${to}\n` });
      send(codex(repo.dir, "s", "PostToolUse", { ...call, tool_response: "Success." }));
    }
    send(codex(repo.dir, "s", "Stop", { turn_id: "turn-1", stop_hook_active: false }));

    expect(hookLogs(sandbox).filter((e) => /outside the workspace/.test(e.message ?? ""))).toEqual([]);
    expect((await logIn(repo, "s"))[0].changed).toEqual(["..env.local", "cfg/..app.secrets"]);
    const rewound = repo.ok("rewind", "--session", "s", "--to", "turn-1");
    expect(rewound.written.sort()).toEqual(["..env.local", "cfg/..app.secrets"]);
    expect([repo.read("..env.local"), repo.read("cfg/..app.secrets")]).toEqual(["TOKEN=orig\n", "S=orig\n"]);
  });
});
