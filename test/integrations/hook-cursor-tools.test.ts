import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { cursor } from "./events.js";
import { expectQuiet, installedCommand, shellHook } from "./hook-helpers.js";

// Cursor's hooks after its tool calls. Payloads as Cursor's hooks documentation gives them
// (cursor.com/docs/agent/hooks, the 1.7 to 2.0 event set): afterFileEdit `file_path, edits`;
// afterShellExecution `command, output, duration`; afterMCPExecution `tool_name, tool_input,
// result_json, duration`; stop `status, loop_count`. Newer builds delete files with a tool of
// their own, reported by the generic postToolUse (captured from Cursor 3.11 in termaxa/termaxa#106:
// `tool_name: "Delete"`, `tool_input.file_path` absolute, `tool_output` a JSON string).
let sandbox: Sandbox;
let repo: Repo;
let hooksFile: string;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "src/app.js": "v1\n", "old.txt": "old\n", "lib/util.js": "u1\n" });
  hooksFile = path.join(repo.dir, ".cursor", "hooks.json");
});
afterEach(() => sandbox.cleanup());

const c = "conv-tools";
const g = "gen-1";
/** The event through the command install put under its name in hooks.json, run as Cursor runs it. */
function send(event: { hook_event_name: string }): void {
  const hooks = JSON.parse(readFileSync(hooksFile, "utf8")).hooks[event.hook_event_name];
  expect(hooks, `hooks.json has no ${event.hook_event_name}`).toBeDefined();
  const command = hooks.find((h: { command: string }) => h.command.includes(" hook cursor")).command;
  const reply = event.hook_event_name === "beforeSubmitPrompt" ? '{"continue":true}' : "{}";
  expectQuiet(shellHook(sandbox, command, event, repo.dir), reply);
}
const prompt = () =>
  send(cursor(repo.dir, c, "beforeSubmitPrompt", { generation_id: g, prompt: "p", attachments: [] }));
const edited = (file: string) =>
  send(cursor(repo.dir, c, "afterFileEdit", { generation_id: g, file_path: repo.path(file), edits: [] }));
const ranShell = (command: string) =>
  send(cursor(repo.dir, c, "afterShellExecution", { generation_id: g, command, output: "", duration: 840 }));
const stop = () =>
  send(cursor(repo.dir, c, "stop", { generation_id: g, status: "completed", loop_count: 0 }));

describe("Cursor's hooks after shell commands, MCP tools and deletes", () => {
  it("keep a person's edits made during the turn from being reverted by rewinding it", () => {
    sandbox.ok(repo.dir, "install", "cursor", "--project");
    prompt();
    repo.write({ "src/app.js": "v2\n" });
    edited("src/app.js");
    repo.write({ "gen/out.txt": "built\n" }); // the shell command's own work
    ranShell("npm run build");
    repo.write({ "lib/util.js": "u2\n" }); // an MCP tool's
    send(
      cursor(repo.dir, c, "afterMCPExecution", {
        generation_id: g,
        tool_name: "format_file",
        tool_input: JSON.stringify({ path: "lib/util.js" }),
        result_json: "{}",
        duration: 120,
      }),
    );
    repo.remove("old.txt"); // the agent's Delete tool
    send(
      cursor(repo.dir, c, "postToolUse", {
        generation_id: g,
        tool_name: "Delete",
        tool_input: { file_path: repo.path("old.txt") },
        tool_output: JSON.stringify({ file_path: repo.path("old.txt"), deleted: true }),
        duration: 3,
      }),
    );
    // While the agent writes its answer, the person saves a note and touches up the agent's app.js.
    repo.write({ "NOTES.md": "mine\n", "src/app.js": "v2 and my fix\n" });
    stop();
    const [turn] = sandbox.ok(repo.dir, "log", "--session", c);
    expect(turn.changed).toEqual(["NOTES.md", "gen/out.txt", "lib/util.js", "old.txt", "src/app.js"]);
    expect(turn.uncertain).toEqual(["NOTES.md", "src/app.js"]);
    const refused = sandbox.cli(repo.dir, ["rewind", "--session", c, "--to", g, "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.afterLastTool).toEqual(["NOTES.md", "src/app.js"]);
    expect([repo.read("NOTES.md"), repo.read("src/app.js")]).toEqual(["mine\n", "v2 and my fix\n"]);
    // The tools' work goes back; the person's stays.
    sandbox.ok(repo.dir, "rewind", "--session", c, "--to", g, "gen/out.txt", "lib/util.js", "old.txt");
    expect([repo.exists("gen/out.txt"), repo.read("lib/util.js"), repo.read("old.txt")]).toEqual([
      false,
      "u1\n",
      "old\n",
    ]);
    expect(repo.read("NOTES.md")).toBe("mine\n");
  });

  it("leave an older install's turns as they were, and doctor says what it lacks", () => {
    // What install wrote before the shell and MCP events: file edits are all it reports.
    sandbox.ok(repo.dir, "install", "cursor", "--project");
    const installed = JSON.parse(readFileSync(hooksFile, "utf8"));
    const { beforeSubmitPrompt, afterFileEdit, stop: stopHooks } = installed.hooks;
    writeFileSync(
      hooksFile,
      JSON.stringify({ version: 1, hooks: { beforeSubmitPrompt, afterFileEdit, stop: stopHooks } }),
    );
    prompt();
    repo.write({ "src/app.js": "v2\n" });
    edited("src/app.js");
    repo.write({ "gen/out.txt": "built\n" }); // a shell command no hook reports
    stop();
    const [turn] = sandbox.ok(repo.dir, "log", "--session", c);
    expect(turn.changed).toEqual(["gen/out.txt", "src/app.js"]);
    expect(turn.uncertain).toBeUndefined();
    const doctor = sandbox.cli(repo.dir, ["doctor", "--json"]);
    const outdated = doctor.json.problems.find((p: { code: string }) => p.code === "hook-install-outdated");
    expect(outdated?.message).toContain("lack afterShellExecution, afterMCPExecution, postToolUse");
    // Installing again brings them.
    sandbox.ok(repo.dir, "install", "cursor", "--project");
    expect(Object.keys(JSON.parse(readFileSync(hooksFile, "utf8")).hooks).sort()).toEqual([
      "afterFileEdit",
      "afterMCPExecution",
      "afterShellExecution",
      "beforeSubmitPrompt",
      "postToolUse",
      "stop",
    ]);
  });

  it("a hand-written `npx -y ghostcommit hook cursor` is the same hook: doctor says what it lacks, install replaces it", () => {
    // As a README elsewhere suggests writing it: the package runner, three events.
    const handwritten = { command: "npx -y ghostcommit hook cursor" };
    const hooks = { beforeSubmitPrompt: [handwritten], afterFileEdit: [handwritten], stop: [handwritten] };
    mkdirSync(path.dirname(hooksFile));
    writeFileSync(hooksFile, JSON.stringify({ version: 1, hooks }, null, 2));
    const doctor = sandbox.cli(repo.dir, ["doctor", "--json"]);
    const outdated = doctor.json.problems.find((p: { code: string }) => p.code === "hook-install-outdated");
    expect(outdated?.message).toContain("lack afterShellExecution, afterMCPExecution, postToolUse");
    const installed = sandbox.ok(repo.dir, "install", "cursor", "--project");
    expect(installed.changed).toBe(true);
    const now = JSON.parse(readFileSync(hooksFile, "utf8")).hooks;
    // One handler per event, the absolute command install writes; no npx left beside it.
    for (const event of ["beforeSubmitPrompt", "afterFileEdit", "stop", "afterShellExecution"]) {
      expect(now[event].map((h: { command: string }) => h.command)).toEqual([installedCommand("cursor")]);
    }
    expect(sandbox.cli(repo.dir, ["doctor", "--json"]).json.problems).toEqual([]);
  });
});
