import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseJsonc } from "../../src/integrations/jsonc.js";
import { CLI, Sandbox } from "../helpers/repo.js";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = new Sandbox();
});
afterEach(() => sandbox.cleanup());

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/** The command install writes: Node and the CLI entry by absolute, quoted paths. */
const command = (agent: string) => `'${process.execPath}' '${CLI}' hook ${agent}`;

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** A user's Claude Code settings with their own hooks on the same events. */
const userClaudeSettings = {
  model: "opus",
  permissions: { allow: ["Bash(npm test)"] },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "lint-bash.sh" }] }],
    Stop: [{ hooks: [{ type: "command", command: "notify-send done", timeout: 5 }] }],
  },
};

describe("install claude-code", () => {
  it("writes the documented hook entries (every end-of-turn event too) into ~/.claude/settings.json by default", () => {
    const dir = sandbox.dir("project");
    const result = sandbox.cli(dir, ["install", "claude-code", "--json"]);
    expect(result.status).toBe(0);
    const file = path.join(sandbox.home, ".claude", "settings.json");
    expect(result.json).toMatchObject({
      agent: "claude-code",
      scope: "user",
      file,
      changed: true,
      created: true,
    });
    const cmd = { type: "command", command: command("claude-code") };
    expect(readJson(file)).toEqual({
      hooks: {
        UserPromptSubmit: [{ hooks: [{ ...cmd, timeout: 30 }] }],
        PreToolUse: [{ matcher: "Write|Edit|MultiEdit|NotebookEdit", hooks: [{ ...cmd, timeout: 30 }] }],
        PostToolUse: [
          { matcher: "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*", hooks: [{ ...cmd, timeout: 60 }] },
        ],
        PostToolUseFailure: [
          { matcher: "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*", hooks: [{ ...cmd, timeout: 60 }] },
        ],
        Stop: [{ hooks: [{ ...cmd, timeout: 60 }] }],
        StopFailure: [{ hooks: [{ ...cmd, timeout: 60 }] }],
        SessionEnd: [{ hooks: [cmd] }],
      },
    });
  });

  it("merges into existing settings and hooks without losing any, and a second run changes nothing", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    writeJson(file, userClaudeSettings);
    expect(sandbox.cli(dir, ["install", "claude-code", "--project", "--json"]).json.changed).toBe(true);
    const merged = readJson(file);
    expect(merged.model).toBe("opus");
    expect(merged.permissions).toEqual(userClaudeSettings.permissions);
    expect(merged.hooks.PreToolUse[0]).toEqual(userClaudeSettings.hooks.PreToolUse[0]);
    expect(merged.hooks.PreToolUse).toHaveLength(2);
    expect(merged.hooks.Stop[0]).toEqual(userClaudeSettings.hooks.Stop[0]);
    const before = readFileSync(file, "utf8");
    const again = sandbox.cli(dir, ["install", "claude-code", "--project", "--json"]);
    expect(again.status).toBe(0);
    expect(again.json).toMatchObject({ changed: false, events: [] });
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("says when other hooks run after the agent's edits, whose rewrites then count as the edits'", () => {
    const dir = sandbox.dir("formatted");
    const note = (run: { json: { notes: string[] } }) => run.json.notes.find((n) => n.startsWith("Other "));
    expect(note(sandbox.cli(dir, ["install", "claude-code", "--project", "--json"]))).toBeUndefined();
    // code.claude.com/docs/en/hooks-guide's example: prettier on the file an Edit or Write touched.
    const prettier = "jq -r '.tool_input.file_path' | xargs npx prettier --write";
    const file = path.join(dir, ".claude", "settings.local.json");
    writeJson(file, {
      hooks: { PostToolUse: [{ matcher: "Edit|Write", hooks: [{ type: "command", command: prettier }] }] },
    });
    expect(note(sandbox.cli(dir, ["install", "claude-code", "--project", "--json"]))).toBe(
      `Other PostToolUse hooks run after the agent's edits (\`${prettier}\`): a file an edit wrote that changes again within 10 s, before the agent's next tool call, counts as the edit's (a formatter's rewrite), so a save of yours to it in those seconds is rewound with the turn.`,
    );
    // One that runs after the shell only does not (found in a trial: it was named all the same).
    writeJson(file, {
      hooks: { PostToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo ran" }] }] },
    });
    expect(note(sandbox.cli(dir, ["install", "claude-code", "--project", "--json"]))).toBeUndefined();
  });

  it("uninstall removes exactly its entries and restores the user's settings", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    writeJson(file, userClaudeSettings);
    sandbox.ok(dir, "install", "claude-code", "--project");
    const result = sandbox.ok(dir, "uninstall", "claude-code", "--project");
    expect(result).toMatchObject({ changed: true, deleted: false });
    expect(readJson(file)).toEqual(userClaudeSettings);
  });

  it("uninstall drops the lists it empties and deletes a settings file install created", () => {
    const dir = sandbox.dir("project");
    sandbox.ok(dir, "install", "claude-code", "--project");
    const file = path.join(dir, ".claude", "settings.json");
    expect(existsSync(file)).toBe(true);
    expect(sandbox.ok(dir, "uninstall", "claude-code", "--project")).toMatchObject({ deleted: true });
    expect(existsSync(file)).toBe(false);
    expect(existsSync(path.join(dir, ".claude"))).toBe(false);
  });

  it("adds /ghostcommit-log, /ghostcommit-rewind and /ghostcommit-redo as Claude Code commands, and removes only its own", () => {
    const dir = sandbox.dir("project");
    const commands = path.join(dir, ".claude", "commands");
    mkdirSync(commands, { recursive: true });
    writeFileSync(path.join(commands, "ghostcommit-redo.md"), "my own redo\n");
    writeFileSync(path.join(commands, "review.md"), "review this\n");
    const report = sandbox.ok(dir, "install", "claude-code", "--project");
    expect(report.commands.map((f: string) => path.basename(f)).sort()).toEqual([
      "ghostcommit-log.md",
      "ghostcommit-rewind.md",
    ]);
    const rewind = readFileSync(path.join(commands, "ghostcommit-rewind.md"), "utf8");
    // Front matter as Claude Code reads it; the `!` line runs the CLI before the prompt reaches the model.
    // The command is the hooks' own: absolute, quoted Node and CLI paths, so it runs without PATH.
    const cli = `'${process.execPath}' '${CLI}'`;
    expect(rewind).toMatch(
      /^---\n[\s\S]*\nargument-hint: "<turn>"\nallowed-tools: Bash\(.+ rewind:\*\)\n---\n/,
    );
    // Each free-text value quoted, as YAML needs where one holds ": " (the log's description does).
    expect(readFileSync(path.join(commands, "ghostcommit-log.md"), "utf8")).toContain(
      'description: "List this session\'s turns (ghostcommit): pick one for /ghostcommit-rewind"\n',
    );
    expect(rewind).toContain(`allowed-tools: Bash(${cli} rewind:*)`);
    expect(rewind).toContain(
      `!\`${cli} rewind --agent claude-code --session=\${CLAUDE_SESSION_ID} --in-chat --keep-open-turn --to $ARGUMENTS\``,
    );
    expect(readFileSync(path.join(commands, "ghostcommit-log.md"), "utf8")).toContain(
      `!\`${cli} log --agent claude-code --session=\${CLAUDE_SESSION_ID} --in-chat\``,
    );
    expect(readFileSync(path.join(commands, "ghostcommit-redo.md"), "utf8")).toBe("my own redo\n");

    const removed = sandbox.ok(dir, "uninstall", "claude-code", "--project");
    expect(removed.commands).toHaveLength(2);
    expect(readdirSync(commands).sort()).toEqual(["ghostcommit-redo.md", "review.md"]);
  });

  it("leaves a command file the user edited as it is: install does not rewrite it, uninstall does not remove it", () => {
    const dir = sandbox.dir("project");
    const commands = path.join(dir, ".claude", "commands");
    sandbox.ok(dir, "install", "claude-code", "--project");
    // The user adds a line of their own to the rewind command (the mark line stays as it was).
    const rewindFile = path.join(commands, "ghostcommit-rewind.md");
    const edited = `${readFileSync(rewindFile, "utf8")}Then run the tests again.\n`;
    writeFileSync(rewindFile, edited);
    const again = sandbox.cli(dir, ["install", "claude-code", "--project"]);
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(rewindFile, "utf8")).toBe(edited);
    const reinstalled = sandbox.ok(dir, "install", "claude-code", "--project");
    expect(reinstalled.commandsKept).toEqual([rewindFile]);
    expect(reinstalled.commands.map((f: string) => path.basename(f)).sort()).toEqual([
      "ghostcommit-log.md",
      "ghostcommit-redo.md",
    ]);
    // A file an earlier version wrote, before files carried their digest, is taken as unedited.
    const logFile = path.join(commands, "ghostcommit-log.md");
    writeFileSync(
      logFile,
      "---\n# written by `ghostcommit install claude-code`; `ghostcommit uninstall claude-code` removes it\ndescription: old\n---\n",
    );
    sandbox.ok(dir, "install", "claude-code", "--project");
    expect(readFileSync(logFile, "utf8")).toMatch(/removes it unless edited \(sha256 [0-9a-f]{16}\)\n/);
    const human = sandbox.cli(dir, ["uninstall", "claude-code", "--project"]);
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toContain(`kept ${rewindFile} as you edited it`);
    expect(readdirSync(commands)).toEqual(["ghostcommit-rewind.md"]);
    expect(readFileSync(rewindFile, "utf8")).toBe(edited);
  });

  it("writes through a symlinked settings file (a dotfile manager's), also one whose target is not there yet", () => {
    const dir = sandbox.dir("project");
    const dotfiles = sandbox.dir("dotfiles");
    const settings = path.join(sandbox.home, ".claude", "settings.json");
    mkdirSync(path.dirname(settings), { recursive: true });
    for (const existing of [true, false]) {
      const real = path.join(dotfiles, existing ? "claude.json" : "not-yet.json");
      if (existing) writeJson(real, userClaudeSettings);
      rmSync(settings, { force: true });
      symlinkSync(real, settings);
      expect(sandbox.cli(dir, ["install", "claude-code"]).status).toBe(0);
      expect(lstatSync(settings).isSymbolicLink()).toBe(true);
      expect(readJson(real).hooks.Stop.map((e: any) => e.hooks[0].command)).toContain(command("claude-code"));
      expect(sandbox.cli(dir, ["uninstall", "claude-code"]).status).toBe(0);
      expect(lstatSync(settings).isSymbolicLink()).toBe(true);
      // The user's file as it was; a file install created through the link is gone again.
      if (existing) expect(readJson(real)).toEqual(userClaudeSettings);
      else expect(existsSync(real)).toBe(false);
    }
  });

  it("keeps a file it did not create even when uninstall leaves it empty", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    writeJson(file, {});
    sandbox.ok(dir, "install", "claude-code", "--project");
    expect(sandbox.ok(dir, "uninstall", "claude-code", "--project")).toMatchObject({ deleted: false });
    expect(readJson(file)).toEqual({});
  });

  it("keeps the user's own empty hooks object (and the file byte for byte) through install and uninstall, twice", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    writeJson(file, { model: "opus", hooks: {} });
    const before = readFileSync(file, "utf8");
    for (let round = 0; round < 2; round++) {
      sandbox.ok(dir, "install", "claude-code", "--project");
      sandbox.ok(dir, "install", "claude-code", "--project"); // again: it finds its own entries
      expect(sandbox.ok(dir, "uninstall", "claude-code", "--project")).toMatchObject({ changed: true });
      expect(readFileSync(file, "utf8")).toBe(before);
    }
  });

  it("gives back a file byte for byte: CRLF line ends, no final newline, and the user's own empty list", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    mkdirSync(path.dirname(file), { recursive: true });
    for (const text of [
      '{\r\n  "model": "opus",\r\n  "hooks": {\r\n    "Stop": []\r\n  }\r\n}\r\n',
      '{\n  "model": "opus"\n}',
      "{}",
      '{"model":"opus","env":{"A":"1"}}\n', // one line, as a tool or an `echo` writes it
      // Blanks inside an empty list or object on one line (found in a trial: they came back as `[]`).
      '{\n  "hooks": {\n    "Stop": [ ],\n    "PreToolUse": [\t]\n  }\n}\n',
      '{"model": "opus", "hooks": { }}\n',
      "{ }",
    ]) {
      writeFileSync(file, text);
      sandbox.ok(dir, "install", "claude-code", "--project");
      const installed = readFileSync(file, "utf8");
      expect(installed).toContain('"Stop"');
      // Settings on one line stay on one line.
      if (text.startsWith('{"model"')) expect(installed.trimEnd().split("\n")).toHaveLength(1);
      sandbox.ok(dir, "uninstall", "claude-code", "--project");
      expect(readFileSync(file, "utf8")).toBe(text);
    }
  });

  it("a file removed by hand after an uninstall is made anew by install, and removed by the next uninstall", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    writeJson(file, { hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] } });
    sandbox.ok(dir, "install", "claude-code", "--project");
    sandbox.ok(dir, "uninstall", "claude-code", "--project");
    rmSync(path.join(dir, ".claude"), { recursive: true });
    sandbox.ok(dir, "install", "claude-code", "--project");
    expect(sandbox.ok(dir, "uninstall", "claude-code", "--project")).toMatchObject({ deleted: true });
    expect(existsSync(path.join(dir, ".claude"))).toBe(false);
  });

  it("refuses a settings file that is not valid JSON and leaves it alone", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '{ "model": "opus", }');
    for (const verb of ["install", "uninstall"]) {
      const result = sandbox.cli(dir, [verb, "claude-code", "--project", "--json"]);
      expect(result.status).toBe(1);
      expect(result.json.error.code).toBe("bad-config");
      // Where, as a person fixing it by hand needs (found in a trial: the message named no place).
      expect(result.stderr).toContain("not valid JSON (line 1, column 20: ");
    }
    expect(readFileSync(file, "utf8")).toBe('{ "model": "opus", }');
    writeFileSync(path.join(dir, ".ghostcommit.json"), '{\n  "enabled": true,\n  "maxStoreBytes": 1e\n}\n');
    const config = sandbox.cli(dir, ["snapshot"]);
    expect([config.status, config.stderr]).toEqual([
      1,
      expect.stringMatching(
        /\.ghostcommit\.json is not valid JSON \(line 3, column 22: exponent part is missing a number\)\n$/,
      ),
    ]);
    // A byte order mark, which no editor shows, is named: the file looks like valid JSON.
    writeFileSync(file, '\uFEFF{ "model": "opus" }\n');
    writeFileSync(path.join(dir, ".ghostcommit.json"), '\uFEFF{ "enabled": true }\n');
    for (const args of [["install", "claude-code", "--project"], ["snapshot"]]) {
      const result = sandbox.cli(dir, args);
      expect([result.status, result.stderr], args[0]).toEqual([
        1,
        expect.stringContaining("byte order mark"),
      ]);
    }
    expect(readFileSync(file, "utf8")).toBe('\uFEFF{ "model": "opus" }\n');
  });

  it("refuses to change a read-only settings file, install and uninstall, slash commands included", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".claude", "settings.json");
    writeJson(file, userClaudeSettings);
    const text = readFileSync(file, "utf8");
    chmodSync(file, 0o444);
    const refused = `ghostcommit: ${file} is read-only; nothing was changed`;
    const install = sandbox.cli(dir, ["install", "claude-code", "--project"]);
    expect([install.status, install.stderr.trim()]).toEqual([1, refused]);
    expect(existsSync(path.join(dir, ".claude", "commands"))).toBe(false);
    // Installed while writable, then protected: uninstall leaves the hooks and the commands.
    chmodSync(file, 0o644);
    sandbox.ok(dir, "install", "claude-code", "--project");
    const installed = readFileSync(file, "utf8");
    chmodSync(file, 0o444);
    expect(sandbox.ok(dir, "install", "claude-code", "--project").changed).toBe(false);
    const uninstall = sandbox.cli(dir, ["uninstall", "claude-code", "--project", "--json"]);
    expect([uninstall.status, uninstall.stderr.trim()]).toEqual([1, refused]);
    expect(readFileSync(file, "utf8")).toBe(installed);
    expect(statSync(file).mode & 0o777).toBe(0o444);
    expect(readdirSync(path.join(dir, ".claude", "commands"))).toHaveLength(3);
    chmodSync(file, 0o644);
    sandbox.ok(dir, "uninstall", "claude-code", "--project");
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("tells, for each agent, what else it needs, in lines a terminal shows as written", () => {
    const dir = sandbox.dir("project");
    for (const agent of ["claude-code", "codex", "cursor", "gemini"]) {
      const run = sandbox.cli(dir, ["install", agent]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^installed .* hooks \(/);
      // No escape sequence printed as text (a "\n" inside a TOML hint once was).
      expect(run.stdout, agent).not.toMatch(/\\[nt]/);
    }
    expect(sandbox.cli(dir, ["install", "codex"]).stdout).toContain(
      "Older Codex builds also need `codex_hooks = true` under `[features]` in ~/.codex/config.toml.",
    );
  });

  it("says, when it writes a project's settings, that they name this machine's paths", () => {
    const dir = sandbox.dir("project");
    const machinePaths = `where they are on this machine (${process.execPath}, ${CLI})`;
    for (const agent of ["claude-code", "codex", "cursor", "gemini"]) {
      const project = sandbox.ok(dir, "install", agent, "--project");
      expect(project.notes.at(-1), agent).toContain(machinePaths);
      expect(project.notes.at(-1), agent).toContain(`\`ghostcommit install ${agent}\``);
      expect(sandbox.ok(dir, "install", agent).notes.join("\n"), agent).not.toContain("on this machine");
    }
    expect(sandbox.cli(dir, ["install", "cursor", "--project"]).stdout).toContain(
      `a teammate who gets ${path.join(dir, ".cursor", "hooks.json")} through git needs them at the same paths`,
    );
  });

  it("refuses an unknown agent and conflicting scopes as usage errors", () => {
    const dir = sandbox.dir("project");
    expect(sandbox.cli(dir, ["install", "vim"]).status).toBe(2);
    expect(sandbox.cli(dir, ["install", "claude-code", "--user", "--project"]).status).toBe(2);
  });
});

describe("install for other agents", () => {
  it("codex: ~/.codex/hooks.json with tool hooks matching Bash too, Stop, Interrupt and StopFailure", () => {
    const dir = sandbox.dir("project");
    const result = sandbox.ok(dir, "install", "codex");
    expect(result.file).toBe(path.join(sandbox.home, ".codex", "hooks.json"));
    const cmd = { type: "command", command: command("codex") };
    // Codex builds before openai/codex#16732 report apply_patch as a Bash call.
    const matcher = "^(apply_patch|Edit|Write|Bash)$";
    expect(readJson(result.file)).toEqual({
      hooks: {
        UserPromptSubmit: [{ hooks: [{ ...cmd, timeout: 30 }] }],
        PreToolUse: [{ matcher, hooks: [cmd] }],
        PostToolUse: [{ matcher, hooks: [{ ...cmd, timeout: 60 }] }],
        Stop: [{ hooks: [{ ...cmd, timeout: 60 }] }],
        Interrupt: [{ hooks: [{ ...cmd, timeout: 60 }] }],
        StopFailure: [{ hooks: [{ ...cmd, timeout: 60 }] }],
      },
    });
  });

  it("cursor: .cursor/hooks.json with version 1 and flat handlers; uninstall restores the user's file", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".cursor", "hooks.json");
    const mine = { hooks: { afterFileEdit: [{ command: "./format.sh" }] } };
    writeJson(file, mine);
    sandbox.ok(dir, "install", "cursor", "--project");
    const cmd = { command: command("cursor") };
    expect(readJson(file)).toEqual({
      version: 1,
      hooks: {
        afterFileEdit: [{ command: "./format.sh" }, cmd],
        beforeSubmitPrompt: [cmd],
        afterShellExecution: [cmd],
        afterMCPExecution: [cmd],
        postToolUse: [{ ...cmd, matcher: "Delete" }],
        stop: [cmd],
      },
    });
    sandbox.ok(dir, "uninstall", "cursor", "--project");
    // The file as it was, byte for byte, without the version install added (found in a trial: it stayed).
    expect(readFileSync(file, "utf8")).toBe(`${JSON.stringify(mine, null, 2)}\n`);
    // Hooks added to another event since install may need it: then it stays.
    sandbox.ok(dir, "install", "cursor", "--project");
    const added = readJson(file);
    added.hooks.beforeShellExecution = [{ command: "./guard.sh" }];
    writeJson(file, added);
    sandbox.ok(dir, "uninstall", "cursor", "--project");
    expect(readJson(file)).toEqual({
      version: 1,
      hooks: { ...mine.hooks, beforeShellExecution: [{ command: "./guard.sh" }] },
    });
  });

  it("cursor: a file install created is deleted by uninstall, version key and all", () => {
    const dir = sandbox.dir("project");
    const result = sandbox.ok(dir, "install", "cursor", "--project");
    expect(readJson(result.file).version).toBe(1);
    expect(sandbox.ok(dir, "uninstall", "cursor", "--project").deleted).toBe(true);
    expect(existsSync(result.file)).toBe(false);
  });

  it("gemini: .gemini/settings.json with named hooks and millisecond timeouts, next to other settings", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".gemini", "settings.json");
    writeJson(file, { general: { checkpointing: { enabled: true } } });
    sandbox.ok(dir, "install", "gemini", "--project");
    const cmd = { type: "command", command: command("gemini") };
    expect(readJson(file)).toEqual({
      general: { checkpointing: { enabled: true } },
      hooks: {
        BeforeAgent: [{ hooks: [{ name: "ghostcommit-begin", ...cmd, timeout: 30000 }] }],
        BeforeTool: [{ matcher: "write_file|replace", hooks: [{ name: "ghostcommit-touch", ...cmd }] }],
        AfterTool: [
          {
            matcher: "write_file|replace|run_shell_command",
            hooks: [{ name: "ghostcommit-progress", ...cmd, timeout: 60000 }],
          },
        ],
        AfterAgent: [{ hooks: [{ name: "ghostcommit-end", ...cmd, timeout: 60000 }] }],
        SessionEnd: [{ hooks: [{ name: "ghostcommit-session-end", ...cmd, timeout: 10000 }] }],
      },
    });
    expect(sandbox.ok(dir, "install", "gemini", "--project").changed).toBe(false);
    sandbox.ok(dir, "uninstall", "gemini", "--project");
    expect(readJson(file)).toEqual({ general: { checkpointing: { enabled: true } } });
  });

  it("gemini: a settings file with comments and trailing commas keeps them through install and uninstall", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".gemini", "settings.json");
    mkdirSync(path.dirname(file), { recursive: true });
    // Gemini CLI reads comments and trailing commas: this file works, it is not broken.
    const text = '{\n  // my theme\n  "ui": { "theme": "GitHub", },\n}\n';
    writeFileSync(file, text);
    expect(sandbox.ok(dir, "install", "gemini", "--project").changed).toBe(true);
    const installed = readFileSync(file, "utf8");
    expect(installed).toContain('// my theme\n  "ui": { "theme": "GitHub", },');
    expect(parseJsonc(installed)).toMatchObject({ ui: { theme: "GitHub" }, hooks: { AfterAgent: [{}] } });
    expect(sandbox.ok(dir, "install", "gemini", "--project").changed).toBe(false);
    expect(sandbox.ok(dir, "uninstall", "gemini", "--project").changed).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("gemini: keeps the hooks object's switches (enabled, disabled) as they are, install and uninstall", () => {
    const dir = sandbox.dir("project");
    const file = path.join(dir, ".gemini", "settings.json");
    const mine = {
      hooks: {
        enabled: true,
        disabled: ["my-linter"],
        AfterTool: [
          { matcher: "write_file", hooks: [{ name: "my-linter", type: "command", command: "lint" }] },
        ],
      },
    };
    writeJson(file, mine);
    expect(sandbox.ok(dir, "install", "gemini", "--project").changed).toBe(true);
    const installed = readJson(file).hooks;
    expect([installed.enabled, installed.disabled]).toEqual([true, ["my-linter"]]);
    expect(installed.AfterTool).toHaveLength(2);
    sandbox.ok(dir, "uninstall", "gemini", "--project");
    expect(readJson(file)).toEqual(mine);
    // Hooks switched off and none of the user's own: the switch stays after uninstall.
    writeJson(file, { hooks: { enabled: false } });
    sandbox.ok(dir, "install", "gemini", "--project");
    sandbox.ok(dir, "uninstall", "gemini", "--project");
    expect(readJson(file)).toEqual({ hooks: { enabled: false } });
    // An event install writes must still be a list.
    writeJson(file, { hooks: { AfterAgent: "nope" } });
    const bad = sandbox.cli(dir, ["install", "gemini", "--project"]);
    expect([bad.status, bad.stderr.trim()]).toEqual([
      1,
      `ghostcommit: ${file}: hooks.AfterAgent is not a list; nothing was changed`,
    ]);
  });
});
