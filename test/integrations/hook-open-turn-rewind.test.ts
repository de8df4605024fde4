import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { claude, codex } from "./events.js";
import { expectQuiet, installedCommand, shellHook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

/**
 * A turn that no end event closed (Esc in Claude Code or Codex), rewound before the next prompt:
 * a change made after the agent's last tool call may be the person's, and is never reverted
 * silently (SPEC §5 "Interrupts"), whether the rewind closes the turn or its conversation ended.
 */
let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "a.txt": "a\n", "b.txt": "b\n" });
});
afterEach(() => sandbox.cleanup());

const send = (agent: string, event: unknown) =>
  expectQuiet(shellHook(sandbox, installedCommand(agent), event, repo.dir));
const files = () => [repo.read("a.txt"), repo.read("b.txt")];

describe("rewinding a turn no end event closed", () => {
  it("still open (Codex, Esc): --force lists the person's later edit as overridden, and redo brings it back", async () => {
    // Codex hooks reference: every event carries session_id, transcript_path, cwd,
    // hook_event_name, model, permission_mode; UserPromptSubmit and the tool events add turn_id.
    send("codex", codex(repo.dir, "cx", "UserPromptSubmit", { turn_id: "t1", prompt: "fix a" }));
    repo.write({ "a.txt": "agent\n" });
    send(
      "codex",
      codex(repo.dir, "cx", "PostToolUse", {
        turn_id: "t1",
        tool_name: "Bash",
        tool_use_id: "call_1",
        tool_input: { command: "echo agent > a.txt" },
        tool_response: "",
      }),
    );
    // Esc: Codex sends no Stop. The person then edits b.txt.
    repo.write({ "b.txt": "the person's edit\n" });

    const refused = repo.cli(["rewind", "--to", "t1", "--json"]);
    expect([refused.status, refused.json.error.code]).toEqual([3, "open-turn"]);
    const plan = repo.ok("rewind", "--to", "t1", "--force", "--dry-run");
    expect([plan.written, plan.overridden]).toEqual([["a.txt", "b.txt"], ["b.txt"]]);
    const human = repo.cli(["rewind", "--to", "t1", "--force"]);
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/overwrote.*b\.txt/);
    expect(files()).toEqual(["a\n", "b\n"]);
    expect((await logIn(repo, "cx"))[0]).toMatchObject({
      turn: "t1",
      state: "rewound",
      changed: ["a.txt", "b.txt"],
      uncertain: ["b.txt"],
    });
    repo.ok("redo", "--session", "cx");
    expect(files()).toEqual(["agent\n", "the person's edit\n"]);
  });

  it("whose conversation ended (Claude Code, Esc then /clear): rewound without --force but for what changed after its last tool call", () => {
    // Claude Code hooks reference: SessionEnd "runs when a session ends", input `reason`
    // ("clear", "logout", "prompt_input_exit", "other"); its agent can no longer be writing.
    send("claude-code", claude(repo.dir, "old", "UserPromptSubmit", { prompt: "fix a" }));
    repo.write({ "a.txt": "agent\n" });
    send(
      "claude-code",
      claude(repo.dir, "old", "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command: "echo agent > a.txt" },
        tool_use_id: "toolu_01",
        tool_response: { stdout: "", stderr: "" },
      }),
    );
    send("claude-code", claude(repo.dir, "old", "SessionEnd", { reason: "clear" }));

    // Nothing changed after the last tool call: the turn is rewound as any ended turn.
    const plain = repo.cli(["rewind", "--session", "old", "--to", "1", "--dry-run", "--json"]);
    expect([plain.status, plain.json.written, plain.json.overridden]).toEqual([0, ["a.txt"], undefined]);

    // The person's edit after it is a conflict (status 3), overwritten only with --force.
    repo.write({ "b.txt": "the person's edit\n" });
    const refused = repo.cli(["rewind", "--session", "old", "--to", "1", "--json"]);
    expect([refused.status, refused.json.error.code, refused.json.uncertain]).toEqual([
      3,
      "conflict",
      ["b.txt"],
    ]);
    expect(files()).toEqual(["agent\n", "the person's edit\n"]);
    const forced = repo.ok("rewind", "--session", "old", "--to", "1", "--force");
    expect(forced.overridden).toEqual(["b.txt"]);
    expect(files()).toEqual(["a\n", "b\n"]);
    repo.ok("redo", "--session", "old");
    expect(files()).toEqual(["agent\n", "the person's edit\n"]);
  });
});
