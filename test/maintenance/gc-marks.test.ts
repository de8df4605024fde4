import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";
import { claude, claudeEvents as ev } from "../integrations/events.js";
import { hook } from "../integrations/hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "a.txt": "a\n", "b.txt": "b\n" });
});
afterEach(() => sandbox.cleanup());

const send = (event: unknown) => expect(hook(sandbox, "claude-code", event, repo.dir).status).toBe(0);

describe("gc and an open turn", () => {
  it("keeps the open turn's progress mark, so after an interrupt only the changes since it are in doubt", async () => {
    const edit = {
      tool_name: "Edit",
      tool_input: { file_path: repo.path("a.txt"), old_string: "a", new_string: "A" },
    };
    send(ev.prompt(repo.dir, "s", "one"));
    send(claude(repo.dir, "s", "PreToolUse", { ...edit, tool_use_id: "toolu_1" }));
    repo.write({ "a.txt": "A\n" });
    send(
      claude(repo.dir, "s", "PostToolUse", {
        ...edit,
        tool_use_id: "toolu_1",
        tool_response: { success: true },
      }),
    );
    // The user runs gc (or retention runs on another session's turn end) while the turn is open.
    expect(repo.ok("gc").dropped).toEqual([]);
    // The agent is interrupted (no Stop); the user edits a file; the next prompt closes turn 1.
    repo.write({ "b.txt": "the user's\n" });
    send(ev.prompt(repo.dir, "s", "two"));
    send(ev.stop(repo.dir, "s"));
    const first = (await logIn(repo, "s")).find((t: any) => t.turn === "1");
    expect(first.changed).toEqual(["a.txt", "b.txt"]);
    expect(first.uncertain).toEqual(["b.txt"]); // a.txt is the agent's, reported by its tool call
    expect(repo.ok("doctor").ok).toBe(true);
  });

  it("in the repo store, keeps it from your git gc --prune=now too, and lets it go once the turn ends", async () => {
    // Found in a trial: the marks are trees in your repository no ref named, which your gc pruned.
    repo.write({ ".ghostcommit.json": '{"store": "repo"}\n' });
    const edit = {
      tool_name: "Write",
      tool_input: { file_path: repo.path("new.txt"), content: "agent\n" },
    };
    send(ev.prompt(repo.dir, "s", "one"));
    send(claude(repo.dir, "s", "PreToolUse", { ...edit, tool_use_id: "toolu_1" }));
    repo.write({ "new.txt": "agent\n" });
    send(claude(repo.dir, "s", "PostToolUse", { ...edit, tool_use_id: "toolu_1", tool_response: {} }));
    // A second call: the first call's mark, which says new.txt is the agent's, is no longer the latest.
    const second = {
      tool_name: "Edit",
      tool_input: { file_path: repo.path("a.txt"), old_string: "a", new_string: "A" },
    };
    send(claude(repo.dir, "s", "PreToolUse", { ...second, tool_use_id: "toolu_2" }));
    repo.write({ "a.txt": "A\n" });
    send(claude(repo.dir, "s", "PostToolUse", { ...second, tool_use_id: "toolu_2", tool_response: {} }));
    const marks = () => repo.git("for-each-ref", "--format=%(refname)", "refs/ghostcommit/").split("\n");
    expect(marks().filter((r) => r.includes("/marks/"))).toHaveLength(1);
    repo.git("gc", "-q", "--prune=now");
    // Interrupted; the user edits a file; the next prompt closes turn 1.
    repo.write({ "b.txt": "the user's\n" });
    send(ev.prompt(repo.dir, "s", "two"));
    send(ev.stop(repo.dir, "s"));
    const first = (await logIn(repo, "s")).find((t: any) => t.turn === "1");
    expect([first.changed, first.uncertain]).toEqual([["a.txt", "b.txt", "new.txt"], ["b.txt"]]);
    expect(marks().filter((r) => r.includes("/marks/"))).toEqual([]);
    expect(repo.git("for-each-ref", "refs/heads", "refs/tags")).not.toContain("ghostcommit");
  });
});
