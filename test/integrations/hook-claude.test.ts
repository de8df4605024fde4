import { realpathSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents as ev, subagent } from "./events.js";
import { appWithSecret, expectQuiet, hook, hookLogs } from "./hook-helpers.js";
import { logIn } from "../helpers/in-process.js";

let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  ({ sandbox, repo } = appWithSecret());
});
afterEach(() => sandbox.cleanup());

/** Sends Claude Code events from a directory other than the workspace: the event's cwd decides. */
function send(event: unknown): void {
  expectQuiet(hook(sandbox, "claude-code", event, sandbox.home));
}

async function log(session: string): Promise<any[]> {
  return logIn(repo, session);
}

describe("Claude Code hook adapter", () => {
  it("records turns from prompt, edit and stop events, and rewinds them (ignored files too)", async () => {
    const s = "sess-1";
    const cwd = repo.dir;
    send(ev.sessionStart(cwd, s));
    send(ev.prompt(cwd, s, "rename the key"));
    send(ev.write(cwd, s, repo.path(".env")));
    repo.write({ ".env": "KEY=new\n", "src/app.js": "v1\n" });
    send(ev.ranBash(cwd, s, "sed -i s/KEY/NEW_KEY/ src/app.js")); // its shell edits the other file
    send(ev.stop(cwd, s));
    send(ev.prompt(cwd, s, "now the notebook"));
    send(ev.notebook(cwd, s, repo.path("nb.ipynb")));
    repo.write({ "nb.ipynb": "{}\n", "src/app.js": "v2\n" });
    send(ev.ranBash(cwd, s, "node update-app.js"));
    send(ev.stop(cwd, s));

    const turns = await log(s);
    expect(turns.map((t) => [t.turn, t.state, t.prompt])).toEqual([
      ["1", "done", "rename the key"],
      ["2", "done", "now the notebook"],
    ]);
    expect(turns[0].changed.sort()).toEqual([".env", "src/app.js"]);
    expect(turns[1].changed.sort()).toEqual(["nb.ipynb", "src/app.js"]);

    const rewound = repo.ok("rewind", "--session", s, "--to", "1");
    expect(rewound.rewoundTurns).toEqual(["1", "2"]);
    expect(repo.read(".env")).toBe("KEY=old\n");
    expect(repo.read("src/app.js")).toBe("v0\n");
    expect(repo.exists("nb.ipynb")).toBe(false);
  });

  it("ends a turn whose Stop never came when the next prompt arrives", async () => {
    const s = "sess-2";
    send(ev.prompt(repo.dir, s, "first"));
    repo.write({ "src/app.js": "v1\n" });
    // interrupted: no Stop
    send(ev.prompt(repo.dir, s, "second"));
    const turns = await log(s);
    expect(turns.map((t) => [t.turn, t.state])).toEqual([
      ["1", "done"],
      ["2", "open"],
    ]);
    expect(turns[0].changed).toEqual(["src/app.js"]);
  });

  it("continues turn numbers after a rewind", async () => {
    const s = "sess-3";
    for (const n of [1, 2, 3]) {
      send(ev.prompt(repo.dir, s, `prompt ${n}`));
      repo.write({ "src/app.js": `v${n}\n` });
      send(ev.ranBash(repo.dir, s, `node step-${n}.js`));
      send(ev.stop(repo.dir, s));
    }
    repo.ok("rewind", "--session", s, "--to", "2");
    expect(repo.read("src/app.js")).toBe("v1\n");
    // The first prompt after a rewind tells the model (see hook-context.test.ts).
    const told = hook(sandbox, "claude-code", ev.prompt(repo.dir, s, "after the rewind"), sandbox.home);
    expect(told.status).toBe(0);
    expect(JSON.parse(told.stdout).hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    repo.write({ "src/app.js": "v4\n" });
    send(ev.ranBash(repo.dir, s, "node step-4.js"));
    send(ev.stop(repo.dir, s));
    const turns = await log(s);
    expect(turns.map((t) => [t.turn, t.state])).toEqual([
      ["1", "done"],
      ["2", "rewound"],
      ["3", "rewound"],
      ["4", "done"],
    ]);
    repo.ok("rewind", "--session", s, "--to", "4");
    expect(repo.read("src/app.js")).toBe("v1\n");
  });

  it("lets subagents touch paths but never begin or end turns", async () => {
    const s = "sess-4";
    send(ev.prompt(repo.dir, s, "delegate"));
    send(subagent(ev.prompt(repo.dir, s, "subagent prompt")));
    send(subagent(ev.write(repo.dir, s, repo.path(".env"))));
    repo.write({ ".env": "KEY=sub\n" });
    send(subagent(ev.stop(repo.dir, s)));
    expect((await log(s)).map((t) => [t.turn, t.state])).toEqual([["1", "open"]]);
    send(ev.stop(repo.dir, s));
    const [turn] = await log(s);
    expect(turn.state).toBe("done");
    expect(turn.changed).toEqual([".env"]);
    repo.ok("rewind", "--session", s, "--to", "1");
    expect(repo.read(".env")).toBe("KEY=old\n");
  });

  it("ignores paths outside the workspace without failing the turn, and doctor reports them", async () => {
    const s = "sess-5";
    send(ev.prompt(repo.dir, s, "edit outside"));
    send(ev.write(repo.dir, s, "/etc/hosts"));
    send(ev.edit(repo.dir, s, repo.path(".git/config")));
    send(ev.stop(repo.dir, s));
    expect((await log(s))[0].state).toBe("done");
    const messages = (level: string) =>
      hookLogs(sandbox)
        .filter((e) => e.level === level)
        .map((e) => e.message);
    expect(messages("warn")).toEqual([`ignored a path in .git: ${repo.path(".git/config")}`]);
    expect(messages("error")).toEqual([`not recorded: a path outside the workspace ${repo.dir}: /etc/hosts`]);
    const doctor = repo.cli(["doctor"]);
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toContain("/etc/hosts");
  });

  it("says of an edit in a submodule that no snapshot holds it, and doctor reports it", async () => {
    const lib = sandbox.repo("lib", { "lib.txt": "lib\n" });
    sandbox.git(
      repo.dir,
      "-c",
      "protocol.file.allow=always",
      "submodule",
      "add",
      "-q",
      lib.dir,
      "vendor/lib",
    );
    sandbox.git(repo.dir, "commit", "-qm", "vendor lib");
    const s = "sess-sub";
    send(ev.prompt(repo.dir, s, "patch the vendored lib"));
    send(ev.edit(repo.dir, s, repo.path("vendor/lib/lib.txt")));
    repo.write({ "vendor/lib/lib.txt": "patched\n" });
    send(ev.edit(repo.dir, s, repo.path("src/app.js")));
    repo.write({ "src/app.js": "v1\n" });
    send(ev.stop(repo.dir, s));
    expect((await log(s))[0].changed).toEqual(["src/app.js"]);
    // Before, the hooks left it out without a word and doctor found no problem.
    const errors = hookLogs(sandbox)
      .filter((e) => e.level === "error")
      .map((e) => e.message);
    expect(errors).toEqual([
      `not recorded: vendor/lib/lib.txt is in a nested repository or submodule, which snapshots of ${repo.dir} leave out ("nestedRepos": "capture" takes them in)`,
    ]);
    const doctor = repo.cli(["doctor"]);
    expect([doctor.status, doctor.stdout]).toEqual([
      1,
      expect.stringContaining("vendor/lib/lib.txt is in a nested"),
    ]);
  });

  it("uses -C over the event's cwd, and accepts a symlinked spelling of the workspace", async () => {
    const link = path.join(sandbox.home, "link");
    symlinkSync(repo.dir, link);
    const s = "sess-6";
    const elsewhere = sandbox.dir("elsewhere");
    expectQuiet(hook(sandbox, "claude-code", ev.prompt(elsewhere, s, "p"), elsewhere, ["-C", link]));
    expectQuiet(
      hook(sandbox, "claude-code", ev.write(elsewhere, s, path.join(link, ".env")), elsewhere, ["-C", link]),
    );
    repo.write({ ".env": "KEY=linked\n" });
    expectQuiet(hook(sandbox, "claude-code", ev.stop(link, s), elsewhere));
    expect(realpathSync(link)).toBe(repo.dir);
    expect((await log(s))[0]).toMatchObject({ state: "done", changed: [".env"] });
  });
});
