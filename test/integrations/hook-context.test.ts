import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { codex, cursor, gemini } from "./events.js";
import { hook } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

/**
 * After a rewind or redo, the session's next prompt event answers with the agent's documented
 * context field, once:
 * - Codex UserPromptSubmit: `{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
 *   "additionalContext": "…"}}` (developers.openai.com/codex/hooks), as Claude Code's;
 * - Gemini CLI BeforeAgent: `hookSpecificOutput.additionalContext`, "appends text directly to the
 *   agent's context" (geminicli.com/docs/hooks/reference);
 * - Cursor's beforeSubmitPrompt has no such field: its answer stays `{"continue": true}`.
 */

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "src/app.js": "v0\n" });
});
afterEach(() => sandbox.cleanup());

/** Runs the agent's hook command with one event; returns its stdout (exit status must be 0). */
function send(agent: string, event: unknown): string {
  const result = hook(sandbox, agent, event, repo.dir);
  expect(result.status).toBe(0);
  return result.stdout.trim();
}

/** A turn that edits src/app.js, then its rewind from a terminal. */
async function turnAndRewind(
  agent: string,
  session: string,
  prompt: (n: number) => unknown,
  stop: (n: number) => unknown,
  toolDone?: () => unknown,
) {
  for (const n of [1]) {
    send(agent, prompt(n));
    repo.write({ "src/app.js": `${session} v${n}\n` });
    if (toolDone) send(agent, toolDone()); // the tool call that wrote it, where the agent reports it after
    send(agent, stop(n));
  }
  const turn = (await logIn(repo, session))[0].turn;
  repo.ok("rewind", "--session", session, "--to", turn);
}

describe("the model is told what went back", () => {
  it("Codex and Gemini CLI get their context field once; Cursor's answer stays unchanged", async () => {
    const cx = "codex-s";
    await turnAndRewind(
      "codex",
      cx,
      (n) => codex(repo.dir, cx, "UserPromptSubmit", { turn_id: `t${n}`, prompt: `p${n}` }),
      (n) =>
        codex(repo.dir, cx, "Stop", {
          turn_id: `t${n}`,
          stop_hook_active: false,
          last_assistant_message: "ok",
        }),
    );
    // The agent's shell is in src/ now (`cd src` in a command): the paths are the workspace's, and it says so.
    const told = JSON.parse(
      send("codex", codex(repo.path("src"), cx, "UserPromptSubmit", { turn_id: "t2", prompt: "p2" })),
    );
    expect(told.hookSpecificOutput.additionalContext).toContain(`\nPaths are relative to ${repo.dir}.\n`);
    expect(told.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    expect(told.hookSpecificOutput.additionalContext).toMatch(/Rewound turn t1[\s\S]*- src\/app\.js/);
    // Told once, though the rewind journals its plan before its outcome.
    expect(told.hookSpecificOutput.additionalContext.match(/Rewound/g)).toHaveLength(1);
    send("codex", codex(repo.dir, cx, "Stop", { turn_id: "t2", stop_hook_active: false }));
    expect(send("codex", codex(repo.dir, cx, "UserPromptSubmit", { turn_id: "t3", prompt: "p3" }))).toBe("");
    // Each session's turn ends before the next agent edits the same file: turns of two sessions
    // that overlap in time make an edit neither reported uncertain for both (a refused rewind).
    send("codex", codex(repo.dir, cx, "Stop", { turn_id: "t3", stop_hook_active: false }));

    const gm = "gemini-s";
    await turnAndRewind(
      "gemini",
      gm,
      (n) => gemini(repo.dir, gm, "BeforeAgent", { prompt: `p${n}` }),
      (n) =>
        gemini(repo.dir, gm, "AfterAgent", {
          prompt: `p${n}`,
          prompt_response: "ok",
          stop_hook_active: false,
        }),
      () =>
        gemini(repo.dir, gm, "AfterTool", {
          tool_name: "run_shell_command",
          tool_input: { command: "node edit-app.js" },
          tool_response: { llmContent: "", returnDisplay: "" },
        }),
    );
    const gTold = JSON.parse(send("gemini", gemini(repo.dir, gm, "BeforeAgent", { prompt: "p3" })));
    expect(gTold.hookSpecificOutput.hookEventName).toBe("BeforeAgent");
    expect(gTold.hookSpecificOutput.additionalContext).toContain("- src/app.js");
    expect(gTold.hookSpecificOutput.additionalContext).not.toMatch(/[<>]/);
    expect(gTold.hookSpecificOutput.additionalContext).not.toContain("Paths are relative to");
    expect(send("gemini", gemini(repo.dir, gm, "AfterAgent", { prompt: "p3", prompt_response: "ok" }))).toBe(
      "{}",
    );
    expect(send("gemini", gemini(repo.dir, gm, "BeforeAgent", { prompt: "p4" }))).toBe("{}");
    send("gemini", gemini(repo.dir, gm, "AfterAgent", { prompt: "p4", prompt_response: "ok" }));

    const cu = "cursor-s";
    await turnAndRewind(
      "cursor",
      cu,
      (n) =>
        cursor(repo.dir, cu, "beforeSubmitPrompt", {
          generation_id: `g${n}`,
          prompt: `p${n}`,
          attachments: [],
        }),
      (n) => cursor(repo.dir, cu, "stop", { generation_id: `g${n}`, status: "completed", loop_count: 0 }),
    );
    expect(
      send("cursor", cursor(repo.dir, cu, "beforeSubmitPrompt", { generation_id: "g3", prompt: "p3" })),
    ).toBe('{"continue":true}');
  });

  it("tells the model once when the prompt's hook is installed twice (project and user) and both run at once", async () => {
    const cx = "codex-twice";
    await turnAndRewind(
      "codex",
      cx,
      (n) => codex(repo.dir, cx, "UserPromptSubmit", { turn_id: `t${n}`, prompt: `p${n}` }),
      (n) => codex(repo.dir, cx, "Stop", { turn_id: `t${n}`, stop_hook_active: false }),
    );
    // Codex runs every matching hook of every layer, concurrently.
    const event = JSON.stringify(codex(repo.dir, cx, "UserPromptSubmit", { turn_id: "t2", prompt: "p2" }));
    const runOne = () =>
      new Promise<{ status: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, "hook", "codex"], { cwd: repo.dir, env: sandbox.env });
        let stdout = "";
        child.stdout.on("data", (chunk) => {
          stdout += chunk;
        });
        child.on("close", (status) => resolve({ status, stdout }));
        child.stdin.end(event);
      });
    const runs = await Promise.all([runOne(), runOne()]);
    expect(runs.map((r) => r.status)).toEqual([0, 0]);
    const told = runs.map((r) => r.stdout.trim()).filter((out) => out !== "");
    expect(told).toHaveLength(1);
    expect(JSON.parse(told[0]).hookSpecificOutput.additionalContext).toMatch(/Rewound turn t1/);
    expect((await logIn(repo, cx)).map((t) => t.turn)).toEqual(["t1", "t2"]);
  });

  it("after a redo, names the files it deleted as deleted (those the rewind had brought back)", () => {
    const s = "codex-r";
    repo.write({ "x.txt": "x\n" });
    repo.git("add", "x.txt");
    repo.git("commit", "-qm", "x");
    send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t1", prompt: "replace x" }));
    repo.remove("x.txt");
    repo.write({ "new.txt": "n\n" });
    send("codex", codex(repo.dir, s, "Stop", { turn_id: "t1", stop_hook_active: false }));
    repo.ok("rewind", "--session", s, "--to", "t1"); // x.txt back, new.txt deleted
    repo.ok("redo", "--session", s); // x.txt deleted again, new.txt back
    expect([repo.exists("x.txt"), repo.exists("new.txt")]).toEqual([false, true]);
    const told = JSON.parse(
      send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t2", prompt: "go" })),
    );
    const lines = told.hookSpecificOutput.additionalContext.split("\n");
    const redo = lines.slice(lines.findIndex((l: string) => l.startsWith("Redo restored turn t1")));
    expect(redo.slice(1, 3)).toEqual(["- new.txt", "- x.txt (deleted)"]);
    expect(
      lines.slice(lines.findIndex((l: string) => l.startsWith("Rewound turn t1")) + 1).slice(0, 2),
    ).toEqual(["- new.txt (deleted)", "- x.txt"]);
  });

  // Found in a trial: a name with a newline broke its list item in two.
  it("quotes a file name with a newline or a control character, one list item each", () => {
    const s = "codex-names";
    send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t1", prompt: "odd names" }));
    repo.write({ "two\nlines.txt": "x\n", "tab\there.txt": "y\n" });
    send("codex", codex(repo.dir, s, "Stop", { turn_id: "t1", stop_hook_active: false }));
    repo.ok("rewind", "--session", s, "--to", "t1");
    const told = JSON.parse(
      send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t2", prompt: "go" })),
    ).hookSpecificOutput.additionalContext as string;
    const lines = told.split("\n");
    const at = lines.findIndex((l) => l.startsWith("Rewound turn t1"));
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '- "tab\\there.txt" (deleted)',
      '- "two\\nlines.txt" (deleted)',
    ]);
  });

  it("says a rewind that left every file as it is changed none, rather than heading an empty list", () => {
    const s = "codex-left";
    send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t1", prompt: "take notes" }));
    repo.write({ "notes.txt": "the agent's notes\n" });
    send("codex", codex(repo.dir, s, "Stop", { turn_id: "t1", stop_hook_active: false }));
    repo.write({ ".ghostignore": "notes.txt\n" }); // excluded since: the rewind leaves it
    const rewound = repo.ok("rewind", "--session", s, "--to", "t1");
    expect([rewound.written, rewound.deleted, rewound.skipped]).toEqual([
      [],
      [],
      [{ path: "notes.txt", reason: "excluded" }],
    ]);
    const told = JSON.parse(
      send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "t2", prompt: "go" })),
    ).hookSpecificOutput.additionalContext as string;
    expect(told.split("\n")).toContain(
      "Rewound turn t1, though no file changed: what it changed was left as it is.",
    );
    expect(told).not.toContain("these files are back");
    repo.remove(".ghostignore");
  });

  it("past the size cap, keeps the newest event and the closing line, cutting older ones", () => {
    const s = "codex-long";
    send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "1", prompt: "generate" }));
    repo.write(
      Object.fromEntries(
        Array.from({ length: 150 }, (_, i) => [`gen/file-with-a-longish-name-${i}.txt`, `${i}\n`]),
      ),
    );
    send("codex", codex(repo.dir, s, "Stop", { turn_id: "1", stop_hook_active: false }));
    send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "2", prompt: "important" }));
    repo.write({ "src/app.js": "important\n" });
    send("codex", codex(repo.dir, s, "Stop", { turn_id: "2", stop_hook_active: false }));
    // A person rewinds both, redoes both, then rewinds turn 2 again: src/app.js is v0 now.
    repo.ok("rewind", "--session", s, "--to", "1");
    repo.ok("redo", "--session", s);
    repo.ok("rewind", "--session", s, "--to", "2");
    expect(repo.read("src/app.js")).toBe("v0\n");
    const told = JSON.parse(
      send("codex", codex(repo.dir, s, "UserPromptSubmit", { turn_id: "3", prompt: "go on" })),
    ).hookSpecificOutput.additionalContext as string;
    expect(told.length).toBeLessThanOrEqual(8000);
    const lines = told.split("\n");
    expect(lines[0]).toBe(
      "ghostcommit: since the last prompt, rewinds and redos (the person's, or yours through ghostcommit's tools) changed files of this workspace.",
    );
    expect(lines.slice(-3)).toEqual([
      "Rewound turn 2: these files are back as they were before it:",
      "- src/app.js",
      "Re-read any of these files before editing them: what you remember of them is out of date.",
    ]);
    // The events in the order they happened, the older ones cut short but never dropped unsaid.
    const headings = lines.filter((l) => /^(Rewound|Redo|\()/.test(l));
    expect(headings.at(-2)).toBe(
      "Redo restored turns 1, 2: these files are back as they were before the rewind:",
    );
    expect(told).toMatch(/- … and \d+ more\n/);
  });
});
