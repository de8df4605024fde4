import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { claudeEvents as ev } from "./events.js";
import { expectQuiet, shellHook } from "./hook-helpers.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

/**
 * The `!` line of an installed command file, as Claude Code runs it: `$ARGUMENTS` and
 * `${CLAUDE_SESSION_ID}` substituted in the text first (skills docs, "Available string
 * substitutions"; custom commands are skills), then the line through the shell. `session`
 * undefined is a Claude Code older than 2.1.9, which leaves the token to the shell.
 */
function slashCommand(file: string, args: string, session: string | undefined): string {
  const line = /^!`(.*)`$/m.exec(readFileSync(file, "utf8"))?.[1];
  if (!line) throw new Error(`no ! line in ${file}`);
  const withArgs = line.replaceAll("$ARGUMENTS", args);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's token, as the file holds it
  return session === undefined ? withArgs : withArgs.replaceAll("${CLAUDE_SESSION_ID}", session);
}

describe("Claude Code's /ghostcommit-* commands", () => {
  it("act on the session they are typed in, not the one that was active last", () => {
    const repo = sandbox.repo("two-chats", { "base.txt": "b\n" });
    sandbox.ok(repo.dir, "install", "claude-code", "--project");
    const commands = path.join(repo.dir, ".claude", "commands");
    // Readable like the project's other files: they may be committed with it.
    expect(statSync(path.join(commands, "ghostcommit-rewind.md")).mode & 0o777).toBe(0o644);
    const settings = JSON.parse(readFileSync(path.join(repo.dir, ".claude", "settings.json"), "utf8"));
    const hookCommand: string = settings.hooks.UserPromptSubmit[0].hooks[0].command;
    const send = (event: unknown) => expectQuiet(shellHook(sandbox, hookCommand, event, repo.dir));
    // A prompt after a rewind or redo answers with what the model must re-read.
    const prompt = (text: string) =>
      expect(shellHook(sandbox, hookCommand, ev.prompt(repo.dir, "K1", text), repo.dir).status).toBe(0);
    /** The user typing `/<name> <args>` in session `session`. */
    const typed = (name: string, args: string, session: string | undefined) =>
      shellHook(sandbox, slashCommand(path.join(commands, `${name}.md`), args, session), "", repo.dir);

    // Two conversations in one workspace: K1 wrote k1.txt, K2 wrote k2.txt and is working again.
    for (const [session, file] of [
      ["K1", "k1.txt"],
      ["K2", "k2.txt"],
    ]) {
      send(ev.prompt(repo.dir, session, `write ${file}`));
      send(ev.write(repo.dir, session, repo.path(file)));
      repo.write({ [file]: `${session}\n` });
      send(ev.stop(repo.dir, session));
    }
    send(ev.prompt(repo.dir, "K2", "more"));
    // In K1 the user types `/ghostcommit-rewind 1`; K2's tools keep running meanwhile.
    send(ev.prompt(repo.dir, "K1", "/ghostcommit-rewind 1"));
    send(ev.write(repo.dir, "K2", repo.path("k2-more.txt")));
    const rewind = typed("ghostcommit-rewind", "1", "K1");
    expect(rewind.status, rewind.stderr).toBe(0);
    expect(rewind.stdout).toContain("of session K1");
    expect([repo.exists("k1.txt"), repo.read("k2.txt")]).toEqual([false, "K2\n"]);
    send(ev.stop(repo.dir, "K1"));
    // Each command typed is a prompt too: its hook begins a turn before the ! line runs. Neither
    // that of /ghostcommit-log nor that of /ghostcommit-redo puts the rewind out of redo's reach.
    prompt("/ghostcommit-log");
    const log = typed("ghostcommit-log", "", "K1");
    expect(log.stdout).toContain("/ghostcommit-rewind 1");
    send(ev.stop(repo.dir, "K1"));
    prompt("/ghostcommit-redo");
    const redo = typed("ghostcommit-redo", "", "K1");
    expect(redo.status, redo.stderr).toBe(0);
    expect(repo.read("k1.txt")).toBe("K1\n");

    // The agent `cd`-ed into a subdirectory (a workspace of its own): the line runs there, and
    // acts in the workspace the session's hooks keep it in.
    repo.write({ "src/s.txt": "s0\n" });
    // (Its context tells the model about the rewind and redo above.)
    expect(
      shellHook(sandbox, hookCommand, ev.prompt(repo.dir, "K1", "cd src and write there"), repo.dir).status,
    ).toBe(0);
    const deeper = repo.path("src");
    send(ev.write(deeper, "K1", repo.path("src/s.txt")));
    repo.write({ "src/s.txt": "s1\n" });
    send(ev.stop(deeper, "K1"));
    const typedIn = (name: string, args: string) =>
      shellHook(sandbox, slashCommand(path.join(commands, `${name}.md`), args, "K1"), "", deeper);
    expect(typedIn("ghostcommit-log", "").stdout).toContain("cd src and write there");
    const fromSub = typedIn("ghostcommit-rewind", "5");
    expect(fromSub.status, fromSub.stderr).toBe(0);
    expect(repo.read("src/s.txt")).toBe("s0\n");
    // Its undo hint (which the model relays) runs as printed where the line ran.
    const hint = /undo with: ghostcommit (.*)$/m.exec(fromSub.stdout)?.[1];
    expect(hint).toBe(`-C ${repo.dir} redo --session K1`);
    const cli = slashCommand(path.join(commands, "ghostcommit-log.md"), "", "K1").replace(/ log .*$/, "");
    const undo = shellHook(sandbox, `${cli} ${hint}`, "", deeper);
    expect(undo.status, undo.stderr).toBe(0);
    expect(repo.read("src/s.txt")).toBe("s1\n");
    expect(typedIn("ghostcommit-rewind", "5").status).toBe(0);
    expect(typedIn("ghostcommit-redo", "").status).toBe(0);
    expect(repo.read("src/s.txt")).toBe("s1\n");
    // An older Claude Code leaves the session empty there too: the latest session of the
    // workspace its hooks keep, not "no session" in the subdirectory.
    const oldFromSub = shellHook(
      sandbox,
      slashCommand(path.join(commands, "ghostcommit-log.md"), "", undefined),
      "",
      deeper,
    );
    expect(oldFromSub.status, oldFromSub.stderr).toBe(0);
    expect(oldFromSub.stdout).toContain("cd src and write there");

    // An older Claude Code leaves the token: the shell makes it empty, meaning the latest session.
    const old = typed("ghostcommit-log", "", undefined);
    expect(old.status, old.stderr).toBe(0);
    expect(old.stdout).toContain("write k1.txt");
  }, 120_000);

  it("leave a rewind out of redo's reach once a later turn changed files", () => {
    const repo = sandbox.repo("redo-after-work", { "f.txt": "v0\n" });
    sandbox.ok(repo.dir, "install", "claude-code", "--project");
    const commands = path.join(repo.dir, ".claude", "commands");
    const settings = JSON.parse(readFileSync(path.join(repo.dir, ".claude", "settings.json"), "utf8"));
    const hookCommand: string = settings.hooks.UserPromptSubmit[0].hooks[0].command;
    const send = (event: unknown) => expect(shellHook(sandbox, hookCommand, event, repo.dir).status).toBe(0);
    /** The user typing `/<name> <args>`: its prompt, its ! line, the turn's end. */
    const typed = (name: string, args: string) => {
      send(ev.prompt(repo.dir, "S", `/${name} ${args}`.trim()));
      const result = shellHook(
        sandbox,
        slashCommand(path.join(commands, `${name}.md`), args, "S"),
        "",
        repo.dir,
      );
      send(ev.stop(repo.dir, "S"));
      return result;
    };
    const turn = (file: string, content: string) => {
      send(ev.prompt(repo.dir, "S", `write ${file}`));
      send(ev.write(repo.dir, "S", repo.path(file)));
      repo.write({ [file]: content });
      send(ev.stop(repo.dir, "S"));
    };
    turn("f.txt", "v1\n");
    expect(typed("ghostcommit-rewind", "1").status).toBe(0);
    expect(repo.read("f.txt")).toBe("v0\n");
    turn("g.txt", "g\n");
    const late = typed("ghostcommit-redo", "");
    // Said with why, and where the files it rewound are now: on stdout, with status 0, since
    // Claude Code shows a `!` line's output only when it exits 0 (gotalab/cc-sdd#1: "Bash command
    // failed for pattern" otherwise).
    expect(late.status).toBe(0);
    expect(late.stdout.trim().split("\n")[1]).toBe("(ghostcommit exited with status 1)");
    const said = late.stdout.trim().split("\n")[0];
    expect(said).toMatch(
      /^ghostcommit: session S has no rewind to redo: a turn began after its rewind to turn 1, and a new turn ends what redo can bring back; that rewind's safety snapshot ([0-9a-f]{12}) holds the files as they were before it \(`ghostcommit -C \S+ restore \1 -- PATH`, PATH from the workspace's top, brings one back, wherever it is run\)$/,
    );
    expect([repo.read("f.txt"), repo.read("g.txt")]).toEqual(["v0\n", "g\n"]);
    // Run as printed from where the agent's shell is (a subdirectory), it brings the file back.
    const hint = /`ghostcommit (-C \S+ restore [0-9a-f]{12}) -- PATH`/.exec(said)![1].split(" ");
    mkdirSync(repo.path("sub"), { recursive: true });
    const restored = sandbox.cli(repo.path("sub"), [...hint, "--", "f.txt"]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(repo.read("f.txt")).toBe("v1\n");
  });
  it("reach a session named by the start of its id with --agent from a subdirectory, as by its whole id", () => {
    const repo = sandbox.repo("prefix-from-sub", { "src/a.txt": "a0\n" });
    sandbox.ok(repo.dir, "install", "claude-code", "--project");
    const settings = JSON.parse(readFileSync(path.join(repo.dir, ".claude", "settings.json"), "utf8"));
    const hookCommand: string = settings.hooks.UserPromptSubmit[0].hooks[0].command;
    const deeper = repo.path("src");
    const id = "0f3e1c2b-1111-2222-3333-444455556666";
    // Claude Code runs hooks in the project directory and names it; its shell had `cd`-ed to src/.
    const send = (event: unknown) =>
      expectQuiet(shellHook(sandbox, hookCommand, event, repo.dir, { CLAUDE_PROJECT_DIR: repo.dir }));
    send(ev.prompt(deeper, id, "edit a.txt"));
    send(ev.write(deeper, id, repo.path("src/a.txt")));
    repo.write({ "src/a.txt": "a1\n" });
    send(ev.stop(deeper, id));
    // The hooks keep the session at the project's root; the person types in src/.
    const whole = sandbox.cli(deeper, ["log", "--agent", "claude-code", "--session", id, "--json"]);
    expect(whole.status, whole.stderr).toBe(0);
    const start = sandbox.cli(deeper, ["log", "--agent", "claude-code", "--session", "0f3e1c2b", "--json"]);
    expect(start.status, start.stderr).toBe(0);
    expect(start.json).toEqual(whole.json);
    // Named paths are the session's workspace's (the root), and an error says so (found in a
    // trial: it named src/, from where the same paths then worked).
    const by = ["rewind", "--agent", "claude-code", "--session", "0f3e", "--to", "1"];
    const outside = sandbox.cli(deeper, [...by, "--", "../a.txt"]);
    expect([outside.status, outside.stderr]).toEqual([
      2,
      `ghostcommit: path is outside the workspace: ../a.txt (paths are relative to the workspace ${repo.dir})\n`,
    ]);
    const rewind = sandbox.cli(deeper, [...by, "--", "src/a.txt"]);
    expect(rewind.status, rewind.stderr).toBe(0);
    expect(repo.read("src/a.txt")).toBe("a0\n");
  });

  it("an edited command whose Node is gone is said by install, which keeps it, and by doctor", () => {
    const repo = sandbox.repo("moved-node", { "base.txt": "b\n" });
    sandbox.ok(repo.dir, "install", "claude-code", "--project");
    const file = path.join(repo.dir, ".claude", "commands", "ghostcommit-log.md");
    // Edited by the user, then Node moved (a version manager's upgrade): it names one that is gone.
    const edited = `${readFileSync(file, "utf8").replace(/^!`'[^']+'/m, "!`'/opt/node-gone/bin/node'")}\nMy note.\n`;
    writeFileSync(file, edited);
    const why = "/opt/node-gone/bin/node is gone or not executable";
    const again = sandbox.cli(repo.dir, ["install", "claude-code", "--project"]);
    expect(again.stdout).toContain(`kept ${file} as you edited it, and it cannot run (${why})`);
    expect(readFileSync(file, "utf8")).toBe(edited);
    const json = sandbox.ok(repo.dir, "install", "claude-code", "--project");
    expect(json.warnings).toEqual([`kept ${file} as you edited it, but it cannot run (${why})`]);
    const problems = sandbox.cli(repo.dir, ["doctor", "--json"]).json.problems;
    expect(problems).toEqual([
      {
        code: "hook-command-broken",
        message: `the slash command /ghostcommit-log in ${path.dirname(file)} cannot run (${why}); run \`ghostcommit install claude-code --project\` again (one you edited is kept: remove it first)`,
        path: file,
      },
    ]);
  });
});
