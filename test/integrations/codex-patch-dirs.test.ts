import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { codex, updatePatch as patch } from "./events.js";
import { shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

// Codex's shell tool takes `command` (argv) and `workdir` (codex-rs protocol's ShellToolCallParams),
// and Codex applies a patch written as `cd DIR && apply_patch <<'EOF'` in DIR (codex-rs
// apply-patch recognizes that form). The patch's paths are relative to that directory.

let sandbox: Sandbox;
let repo: Repo;
let command: string;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", {
    "sub/.gitignore": "*.env\n",
    "other/.gitignore": "*.env\n",
    "app.js": "v0\n",
  });
  repo.write({ "sub/s.env": "S=orig\n", "other/w.env": "W=orig\n" });
  repo.ok("install", "codex", "--project");
  const hooks = JSON.parse(readFileSync(repo.path(".codex/hooks.json"), "utf8"));
  command = hooks.hooks.UserPromptSubmit[0].hooks[0].command;
});
afterEach(() => sandbox.cleanup());

describe("Codex patches applied in another directory", () => {
  it("keep the ignored files they edit after `cd DIR &&` or in the shell call's workdir, and a rewind puts them back", async () => {
    const send = (event: unknown) => {
      const run = shellHook(sandbox, command, event, repo.dir);
      expect([run.status, run.stdout, run.stderr]).toEqual([0, "", ""]);
    };
    const viaCd = {
      tool_name: "Bash",
      tool_use_id: "call_1",
      tool_input: {
        command: ["bash", "-lc", `cd sub && apply_patch <<'EOF'\n${patch("s.env", "S=orig", "S=new")}EOF`],
      },
    };
    const inWorkdir = {
      tool_name: "Bash",
      tool_use_id: "call_2",
      tool_input: {
        command: ["apply_patch", patch("w.env", "W=orig", "W=new")],
        workdir: repo.path("other"),
      },
    };
    send(codex(repo.dir, "s", "UserPromptSubmit", { turn_id: "turn-1", prompt: "rotate the keys" }));
    for (const [call, file, content] of [
      [viaCd, "sub/s.env", "S=new\n"],
      [inWorkdir, "other/w.env", "W=new\n"],
    ] as const) {
      send(codex(repo.dir, "s", "PreToolUse", { turn_id: "turn-1", ...call }));
      repo.write({ [file]: content });
      send(codex(repo.dir, "s", "PostToolUse", { turn_id: "turn-1", ...call, tool_response: "Success." }));
    }
    send(codex(repo.dir, "s", "Stop", { turn_id: "turn-1", stop_hook_active: false }));

    expect((await logIn(repo, "s"))[0].changed).toEqual(["other/w.env", "sub/s.env"]);
    const rewound = repo.ok("rewind", "--session", "s", "--to", "turn-1");
    expect(rewound.written.sort()).toEqual(["other/w.env", "sub/s.env"]);
    expect([repo.read("sub/s.env"), repo.read("other/w.env")]).toEqual(["S=orig\n", "W=orig\n"]);
  });
});
