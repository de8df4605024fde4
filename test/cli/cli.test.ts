import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EMPTY_TREE, objectId, serializeCommit } from "../../src/git/objects.js";
import { LooseObjectWriter } from "../../src/git/loose-objects.js";
import { encodeMessage, type SnapshotMeta } from "../../src/store/metadata.js";
import { CLI } from "../helpers/repo.js";
import { fileSandbox } from "../helpers/support.js";
import { snapshotIn } from "../session/support.js";
import { doctorIn } from "../helpers/in-process.js";

const { sandbox, repo } = fileSandbox();

describe("--in-chat", () => {
  it("with --json prints exactly one JSON document on stdout, the error document on a failure, and exits 0", () => {
    const r = repo();
    for (const [args, code] of [
      [["show", "deadbeef"], "not-found"],
      [["show"], "usage"],
    ] as const) {
      const run = r.cli(["--in-chat", "--json", ...args]);
      expect(run.status, args.join(" ")).toBe(0);
      expect(JSON.parse(run.stdout), args.join(" ")).toEqual({
        error: { code, message: expect.any(String) },
      });
      expect(run.stderr).toMatch(/^ghostcommit: \S/);
    }
    const listed = r.cli(["--in-chat", "--json", "list"]);
    expect([listed.status, JSON.parse(listed.stdout)]).toEqual([0, []]);
    // Without --json the chat shows the message and the status on stdout, where it reads them.
    const human = r.cli(["--in-chat", "show", "deadbeef"]);
    expect([human.status, human.stderr]).toEqual([0, ""]);
    expect(human.stdout).toBe(
      "ghostcommit: no snapshot deadbeef in this workspace\n(ghostcommit exited with status 1)\n",
    );
  });

  it("asks which turn when a chat's rewind command was given none (its line ends in --to)", () => {
    // `/ghostcommit-rewind` typed alone: its `!` line is `… rewind … --to $ARGUMENTS`.
    const r = repo();
    const run = r.cli(["--in-chat", "rewind", "--session", "s", "--keep-open-turn", "--to"]);
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toBe(
      "ghostcommit: which turn? give the turn to go back to, as this session's log lists them (ghostcommit log)\n(ghostcommit exited with status 2)\n",
    );
  });
});

describe("snapshot ids", () => {
  it("accepts the full id and any unique prefix of 7+ hex digits, in any case", async () => {
    const r = repo();
    const snap = await snapshotIn(r);
    expect(r.ok("show", snap.id).id).toBe(snap.id);
    expect(r.ok("show", snap.id.slice(0, 7)).id).toBe(snap.id);
    expect(r.ok("show", snap.id.slice(0, 12).toUpperCase()).id).toBe(snap.id);
  });

  it("fails with status 1 and a JSON error for unknown, malformed, too-short and empty ids", async () => {
    const r = repo();
    const snap = await snapshotIn(r);
    const unknown = snap.id.startsWith("0") ? "1".repeat(40) : "0".repeat(40);
    const cases: [string[], string][] = [
      [["show", unknown], "not-found"],
      [["restore", unknown], "not-found"],
      [["diff", snap.id, unknown], "not-found"],
      [["show", "not-hex!"], "bad-id"],
      [["show", snap.id.slice(0, 6)], "bad-id"],
      [["show", `${snap.id}0`], "bad-id"],
      [["restore", "--dry-run", "zzzzzzz"], "bad-id"],
      [["restore", ""], "bad-id"],
      [["drop", unknown], "not-found"],
    ];
    for (const [args, code] of cases) {
      const result = r.cli([...args, "--json"]);
      expect(result.status, args.join(" ")).toBe(1);
      expect(result.json, args.join(" ")).toEqual({ error: { code, message: expect.any(String) } });
      expect(result.stderr).toMatch(/^ghostcommit: \S/);
      const human = r.cli(args);
      expect(human.status).toBe(1);
      expect(human.stdout).toBe("");
      expect(human.stderr).toMatch(/^ghostcommit: \S/);
    }
  });

  // Found in a trial: each of these named the wrong mistake, or (--in-chat) none on stdout.
  it("says what is missing from a line that names no command to run", () => {
    const r = repo();
    const cases: [string[], string][] = [
      [[], "a command is needed (ghostcommit --help lists them)"],
      [["turn"], "`turn` needs one of its commands (ghostcommit turn --help lists them)"],
      [["help", "bogus"], "unknown command 'bogus' (ghostcommit --help lists the commands)"],
      [["list", "--json=1"], "--json takes no value (ghostcommit list --help says how to call it)"],
    ];
    for (const [args, message] of cases) {
      const result = r.cli(args);
      expect([args.join(" "), result.status, result.stderr.split("\n").at(-2)]).toEqual([
        args.join(" "),
        2,
        `ghostcommit: ${message}`,
      ]);
    }
    // An empty id (an unset variable's) says it was empty; it fails as a malformed one does (SPEC: 1).
    const empty = r.cli(["show", ""]);
    expect([empty.status, empty.stderr]).toEqual([
      1,
      "ghostcommit: not a snapshot id: an empty one (7 to 40 hex digits)\n",
    ]);
    const inChat = r.cli(["--in-chat"]);
    expect([inChat.status, inChat.stdout]).toEqual([
      0,
      "ghostcommit: a command is needed (ghostcommit --help lists them)\n(ghostcommit exited with status 2)\n",
    ]);
  });

  it("says, from a subdirectory, that it is a workspace of its own and how to name the repository's", async () => {
    const r = repo();
    r.write({ "src/a.txt": "a\n" });
    const snap = await snapshotIn(r);
    const sub = r.path("src");
    const list = r.sandbox.cli(sub, ["list"]);
    expect(list.status).toBe(0);
    expect(list.stdout.trim()).toBe(
      `no snapshots of ${sub} yet (a subdirectory keeps its own snapshots: the repository's are reached with -C ${r.dir}); take one with \`ghostcommit snapshot\``,
    );
    const restore = r.sandbox.cli(sub, ["restore", snap.id.slice(0, 12)]);
    expect(restore.status).toBe(1);
    expect(restore.stderr.trim()).toBe(
      `ghostcommit: no snapshot ${snap.id.slice(0, 12)} in this workspace (a subdirectory keeps its own snapshots: the repository's are reached with -C ${r.dir})`,
    );
    expect(r.sandbox.cli(sub, ["restore", snap.id, "-C", r.dir]).status).toBe(0);
    // So are sessions: one begun at the root is not this subdirectory's.
    r.ok("turn", "begin", "--session", "s1", "--turn", "1");
    const elsewhere = `(a subdirectory keeps its own sessions: the repository's are reached with -C ${r.dir})`;
    expect(r.sandbox.cli(sub, ["sessions"]).stdout.trim()).toBe(`no sessions of ${sub} yet ${elsewhere}`);
    const rewind = r.sandbox.cli(sub, ["rewind", "--to", "1"]);
    expect(rewind.status).toBe(1);
    expect(rewind.stderr.trim()).toBe(
      `ghostcommit: this workspace has no session with a turn yet ${elsewhere}`,
    );
    // At the repository's root there is nothing elsewhere to point to.
    expect(r.cli(["show", "0".repeat(40)]).stderr.trim()).toBe(
      `ghostcommit: no snapshot ${"0".repeat(40)} in this workspace`,
    );
  });

  it("says so when a subdirectory workspace is one the repository ignores whole", () => {
    const r = repo({ ".gitignore": "scratch/\n", "a.txt": "a\n" });
    r.write({ "scratch/notes.txt": "n\n", "scratch/d/more.txt": "m\n" });
    const scratch = r.path("scratch");
    const run = r.sandbox.cli(scratch, ["snapshot"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /0 files\n {2}this directory is ignored by the repository: .*--include \. captures them all/,
    );
    expect(r.sandbox.ok(scratch, "snapshot", "--include", ".").fileCount).toBe(2);
    // An empty subdirectory that is not ignored gets no such line.
    r.write({ "empty/.keep": "" });
    r.remove("empty/.keep");
    expect(r.sandbox.cli(r.path("empty"), ["snapshot"]).stdout).not.toContain("ignored");
  });

  it("prints prompts, messages and names with control characters as escapes, never raw", () => {
    const r = repo();
    const evil = "hi \x1b]0;PWNED\x07 \x1b[2J";
    r.ok("turn", "begin", "--session", "s", "--turn", "1", "--prompt", evil);
    r.write({ "evil\x1b]0;PWNED\x07name": "e\n", "new\nline": "n\n" });
    const outputs = [
      r.cli(["turn", "end", "--session", "s", "--turn", "1"]).stdout,
      r.cli(["snapshot", "-m", evil]).stdout,
      r.cli(["log"]).stdout,
      r.cli(["list"]).stdout,
    ];
    expect(r.cli(["rewind", "--json", "--to", "1", "--", "new\nline"]).status).toBe(0);
    outputs.push(r.cli(["log"]).stdout);
    for (const out of outputs) expect(out).not.toMatch(/[\x07\x1b]/);
    expect(outputs[0]).toContain('"evil\\033]0;PWNED\\aname"');
    expect(outputs[2]).toContain("hi \\e]0;PWNED\\a \\e[2J");
    expect(outputs[4]).toContain('rewound only: "new\\nline"');
    // A prompt cut at 200 characters keeps whole emoji (JSON carries no lone surrogate).
    r.ok("turn", "begin", "--session", "u", "--turn", "1", "--prompt", `${"x".repeat(198)}🎉🎉🎉`);
    expect(r.ok("log", "--session", "u")[0].prompt).toBe(`${"x".repeat(198)}…`);
  });

  it("refuses to snapshot the home or root directory, and an empty -C, making no store", () => {
    const r = repo();
    const sandbox = r.sandbox;
    const stores = () =>
      existsSync(path.join(sandbox.home, "data", "workspaces"))
        ? readdirSync(path.join(sandbox.home, "data", "workspaces")).length
        : 0;
    const before = stores();
    // `-C "$PROJECT"` with PROJECT unset: the current directory was snapshotted instead.
    const empty = sandbox.cli(r.dir, ["-C", "", "snapshot", "--json"]);
    expect([empty.status, empty.json.error.code]).toEqual([2, "usage"]);
    expect(empty.stderr.trim()).toBe("ghostcommit: -C needs a directory, not an empty string");
    for (const [cwd, args] of [
      [sandbox.home, ["snapshot"]],
      [r.dir, ["-C", "/", "snapshot"]],
      [sandbox.home, ["turn", "begin", "--session", "s", "--turn", "1"]],
      [r.dir, ["-C", sandbox.home, "restore", "0000000"]],
      [r.dir, ["-C", "/", "diff", "0000000"]],
    ] as [string, string[]][]) {
      const refused = sandbox.cli(cwd, [...args, "--json"], undefined, { HOME: sandbox.home });
      expect([refused.status, refused.json.error.code], args.join(" ")).toEqual([1, "not-a-workspace"]);
      expect(refused.stderr).toMatch(/^ghostcommit: not snapshotting \S+ \(home or root directory\)/);
    }
    expect(stores()).toBe(before);
    // Reading commands still work there (doctor checks the hooks wherever it runs).
    expect(sandbox.cli(sandbox.home, ["list", "--json"]).status).toBe(0);
  });

  it("names a session or turn id holding a line break or an escape on one line of its error", () => {
    const r = repo();
    // Ids come from agents' events as they are (a Cursor conversation_id, a Codex turn_id).
    const evil = "evil\x1b]0;T\x07\nid";
    r.ok("turn", "begin", "--session", evil, "--turn", "1");
    r.ok("turn", "end", "--session", evil, "--turn", "1");
    const errors = [
      r.cli(["log", "--session", "no\nsuch"]),
      r.cli(["rewind", "--session", evil, "--to", "no\nturn"]),
      r.cli(["redo", "--session", evil]),
      r.cli(["turn", "end", "--session", evil]),
      r.cli(["turn", "begin", "--session", evil, "--turn", "1"]),
    ];
    for (const run of errors) {
      expect(run.status).not.toBe(0);
      expect(run.stderr).not.toMatch(/[\x07\x1b]/);
      // One line, the id's line break shown as \n.
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(/^ghostcommit: .*(no\\nsuch|evil\\e\]0;T\\a\\nid)/);
    }
    expect(errors[1].stderr).toContain("has no turn no\\nturn");
    // The JSON error's message reads the same.
    expect(r.cli(["log", "--json", "--session", "no\nsuch"]).json.error.message).toMatch(
      /^no session no\\nsuch in /,
    );
  });

  it("asks for a command where one is missing, with the usage, never commander's placeholder", () => {
    const r = repo();
    const turn = r.cli(["turn"]);
    expect(turn.status).toBe(2);
    expect(turn.stderr).toContain("Usage: ghostcommit turn");
    expect(turn.stderr.trim().split("\n").pop()).toBe(
      "ghostcommit: `turn` needs one of its commands (ghostcommit turn --help lists them)",
    );
    const json = r.cli(["--json"]);
    expect([json.status, json.json?.error]).toEqual([
      2,
      { code: "usage", message: "a command is needed (ghostcommit --help lists them)" },
    ]);
    expect(turn.stderr + json.stdout + json.stderr).not.toContain("outputHelp");
  });

  it("takes the repository root's settings in a subdirectory workspace too: enabled: false there turns the whole repository off", () => {
    const r = repo({ ".ghostcommit.json": '{"enabled": false}\n', "pkg/p.txt": "p\n" });
    for (const cwd of [r.dir, r.path("pkg")]) {
      const run = r.sandbox.cli(cwd, ["snapshot", "--json"]);
      expect([run.status, run.json?.error?.code], cwd).toEqual([1, "disabled"]);
    }
    // The subdirectory's own file comes after the root's, as a setting closer to the files.
    r.write({ "pkg/.ghostcommit.json": '{"enabled": true}\n' });
    expect(r.sandbox.ok(r.path("pkg"), "snapshot").id).toMatch(/^[0-9a-f]{40}$/);
  });

  it("refuses a settings file it cannot read instead of acting without its settings", () => {
    const r = repo();
    mkdirSync(r.path(".ghostcommit.json")); // where `{"enabled": false}` might have been meant
    const run = r.cli(["snapshot", "--json"]);
    expect([run.status, run.json.error.code]).toEqual([1, "bad-config"]);
    expect(run.stderr.trim()).toBe(
      `ghostcommit: cannot read ${r.path(".ghostcommit.json")}: it is a directory`,
    );
    expect(r.cli(["list", "--json"]).json).toMatchObject({ error: { code: "bad-config" } });
    // A symlink to nothing (a dotfile manager's broken link) is there too: not read as no file.
    rmSync(r.path(".ghostcommit.json"), { recursive: true });
    symlinkSync("../gone/settings.json", r.path(".ghostcommit.json"));
    const dangling = r.cli(["snapshot", "--json"]);
    expect([dangling.status, dangling.json.error.code]).toEqual([1, "bad-config"]);
    expect(dangling.json.error.message).toBe(
      `cannot read ${r.path(".ghostcommit.json")}: it is a symlink to ../gone/settings.json, which is not there`,
    );
    // Names that could never match a directory are refused, not silently useless.
    rmSync(r.path(".ghostcommit.json"), { recursive: true });
    for (const name of ["", ".", ".."]) {
      r.write({ ".ghostcommit.json": JSON.stringify({ dependencyDirs: ["node_modules", name] }) });
      expect(r.cli(["snapshot", "--json"]).json.error).toMatchObject({
        code: "bad-config",
        message: expect.stringContaining('"dependencyDirs" must be a list of directory names'),
      });
    }
  });

  it("refuses a fractional count of bytes or files in a settings file, and takes a fraction of a day", () => {
    const r = repo({ "a.txt": "a\n" });
    for (const key of ["largeFileBytes", "largeDirFiles", "budgetFiles", "budgetBytes", "maxStoreBytes"]) {
      r.write({ ".ghostcommit.json": JSON.stringify({ [key]: 1.5 }) });
      const run = r.cli(["snapshot", "--json"]);
      expect([run.status, run.json.error]).toEqual([
        1,
        {
          code: "bad-config",
          message: `${r.path(".ghostcommit.json")}: "${key}" must be a non-negative whole number`,
        },
      ]);
    }
    r.write({ ".ghostcommit.json": JSON.stringify({ retentionDays: 0.5, largeFileBytes: 1e6 }) });
    expect(r.cli(["snapshot", "--json"]).status).toBe(0);
  });

  it("fails with status 1 on an ambiguous prefix", async () => {
    const r = repo();
    r.ok("drop", r.ok("snapshot").id); // the store is created by the first write
    const store = (await doctorIn(r)).store as string;
    // Two snapshot commits whose ids share 7 hex digits (a birthday search over nonces).
    const seen = new Map<string, { id: string; body: Buffer }>();
    let pair: { id: string; body: Buffer }[] | null = null;
    for (let n = 0; !pair; n++) {
      const meta: SnapshotMeta = {
        v: 1,
        t: 1_700_000_000_000_000 + n,
        kind: "snapshot",
        message: "twin",
        parent: null,
        fileCount: 0,
        excluded: [],
        included: [],
        nonce: String(n),
      };
      const body = serializeCommit({
        tree: EMPTY_TREE,
        parents: [],
        time: 1_700_000_000,
        message: encodeMessage(meta),
      });
      const id = objectId("commit", body);
      const other = seen.get(id.slice(0, 7));
      if (other) pair = [other, { id, body }];
      else seen.set(id.slice(0, 7), { id, body });
    }
    const writer = new LooseObjectWriter(path.join(store, "git", "objects"));
    for (const { body } of pair) await writer.write("commit", body);
    await writer.write("tree", Buffer.alloc(0));
    for (const { id } of pair)
      r.sandbox.git(store, "--git-dir=git", "update-ref", `refs/ghostcommit/snapshots/${id}`, id);
    expect(
      r
        .ok("list")
        .map((s: any) => s.id)
        .sort(),
    ).toEqual(pair.map((p) => p.id).sort());
    const result = r.cli(["show", pair[0].id.slice(0, 7), "--json"]);
    expect(result.status).toBe(1);
    expect(result.json.error.code).toBe("ambiguous-id");
    // The message names both candidates, so the user can see which digits tell them apart.
    expect(result.stderr).toContain(`2 snapshots begin with it`);
    for (const { id } of pair)
      expect(result.stderr).toContain(`${id.slice(0, 12)} snapshot 2023-11-14 22:13:20 "twin"`);
    expect(result.stderr).toContain("give more of its digits");
    const longer = pair[0].id.slice(0, 8);
    if (!pair[1].id.startsWith(longer)) expect(r.ok("show", longer).id).toBe(pair[0].id);
  });
});

describe("usage errors", () => {
  it("exit 2 for an unknown command or option, a missing argument, or a bad value", () => {
    const r = repo();
    for (const args of [
      ["frobnicate"],
      ["snapshot", "--frobnicate"],
      ["show"],
      ["gc", "--keep", "many"],
      ["gc", "--older-than", "soon"],
      ["--store", "cloud", "list"],
      ["diff", "--stat", "--patch", "0000000"],
      ["snapshot", "--include", ""], // an unset "$VAR": not the whole workspace
    ]) {
      const result = r.cli([...args, "--json"]);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.json?.error?.code, args.join(" ")).toBe("usage");
      expect(result.stderr).toMatch(/^ghostcommit: /);
    }
    expect(r.ok("list")).toEqual([]);
    expect(r.cli([]).status).toBe(2);
  });

  it("snapshot --include of nothing on disk succeeds and says so: a typo, or a pattern no shell expanded", () => {
    const r = repo();
    r.write({ "src/a.js": "a\n" });
    r.symlink("nowhere", "dangling");
    const result = r.cli([
      "snapshot",
      "--include",
      ".env.locl",
      "--include",
      "src/*.js",
      "--include",
      "dangling",
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout.split("\n").slice(1)).toEqual([
      "  nothing at --include .env.locl: no such file or directory",
      "  nothing at --include src/*.js: no such file or directory (a pattern is not expanded: name the files, or their directory)",
      "",
    ]);
    // With --json too (a dangling symlink is something on disk).
    expect(r.ok("snapshot", "--include", ".env.locl", "--include", "dangling").missingIncludes).toEqual([
      ".env.locl",
    ]);
    expect(r.ok("snapshot", "--include", "dangling").missingIncludes).toBeUndefined();
  });

  it("a parse error names the help that answers it", () => {
    const r = repo();
    const said = (...args: string[]) => r.cli(args).stderr.trim();
    expect(said("show")).toBe(
      "ghostcommit: missing required argument 'id' (ghostcommit show --help says how to call it)",
    );
    expect(said("gc", "--older-than")).toBe(
      "ghostcommit: option '--older-than <age>' argument missing (ghostcommit gc --help says how to call it)",
    );
    expect(said("frobnicate")).toBe(
      "ghostcommit: unknown command 'frobnicate' (ghostcommit --help lists the commands)",
    );
    // One line, in the error document too, commander's suggestion included.
    expect(said("log", "--sessoin", "s")).toBe(
      "ghostcommit: unknown option '--sessoin' (Did you mean --session?) (ghostcommit log --help says how to call it)",
    );
    expect(r.cli(["log", "--json", "--sessoin", "s"]).json.error.message).not.toContain("\n");
    // A command's option before the command (as the global -C goes): said where it belongs.
    expect(said("--agent", "claude-code", "log")).toBe(
      "ghostcommit: --agent is an option of `log`, so it goes after the command: ghostcommit log --agent …",
    );
    expect(said("--force", "rewind", "--to", "1")).toBe(
      "ghostcommit: --force is an option of `rewind`, so it goes after the command: ghostcommit rewind --force …",
    );
    expect(r.cli(["--bogus", "log"]).status).toBe(2);
    expect(said("--bogus", "log")).toBe(
      "ghostcommit: unknown option '--bogus' (ghostcommit log --help says how to call it)",
    );
    // A subcommand's help is its own: `turn --help` lists only the subcommands (found in a trial).
    expect(said("turn", "begin", "--session", "x")).toBe(
      "ghostcommit: required option '--turn <id>' not specified (ghostcommit turn begin --help says how to call it)",
    );
    expect(r.cli(["--help"]).stdout).toMatch(/--in-chat +for an agent's chat command/);
  });

  it("--version prints the installed package's version", () => {
    const r = repo();
    const { version } = JSON.parse(readFileSync(path.join(path.dirname(CLI), "..", "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const result = r.cli([flag]);
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
    }
  });

  it("with --json, --version and --help print one JSON document on stdout", () => {
    const r = repo();
    const { version } = JSON.parse(readFileSync(path.join(path.dirname(CLI), "..", "package.json"), "utf8"));
    const asked = r.cli(["--version", "--json"]);
    expect(asked.status).toBe(0);
    expect(JSON.parse(asked.stdout)).toEqual({ version });
    for (const line of [
      ["--help", "--json"],
      ["--json", "rewind", "--help"],
      ["--json", "help", "turn"],
    ]) {
      const result = r.cli(line);
      expect(result.status).toBe(0);
      const { help } = JSON.parse(result.stdout) as { help: string };
      expect(help).toMatch(/^Usage: ghostcommit /);
    }
    expect(JSON.parse(r.cli(["--json", "rewind", "--help"]).stdout).help).toMatch(/--to <turn>/);
  });

  it("global options work before and after the command", async () => {
    const r = repo();
    const snap = await snapshotIn(r);
    const before = r.sandbox.cli(r.sandbox.home, ["-C", r.dir, "--json", "list"]);
    const after = r.sandbox.cli(r.sandbox.home, ["list", "-C", r.dir, "--json"]);
    expect(before.status).toBe(0);
    expect(JSON.parse(before.stdout)[0].id).toBe(snap.id);
    expect(after.json[0].id).toBe(snap.id);
  });
});

describe("hints", () => {
  it("doctor says a repository store's snapshots are in the repository, its sessions and logs in the data directory", () => {
    const r = repo({ "f.txt": "v1\n" });
    r.ok("--store", "repo", "snapshot");
    const human = r.cli(["--store", "repo", "doctor"]);
    const store = (r.ok("--store", "repo", "doctor") as { store: string }).store;
    expect(human.stdout.split("\n")[0]).toMatch(
      /^git \S+ · store repo: snapshots in the repository's git directory \(refs\/ghostcommit\/\), sessions and logs in (.+)$/,
    );
    expect(human.stdout.split("\n")[0].endsWith(` in ${store}`)).toBe(true);
    expect(r.git("for-each-ref", "--format=%(refname)", "refs/ghostcommit/")).toMatch(/^refs\/ghostcommit\//);
  });

  it("'undo with' names the -C and --store the command was given, so it runs as printed from anywhere", () => {
    const r = repo({ "f.txt": "v1\n" });
    const elsewhere = r.sandbox.home;
    const snap = r.sandbox.ok(elsewhere, "-C", r.dir, "--store", "repo", "snapshot");
    r.write({ "f.txt": "v2\n" });
    const restore = r.sandbox.cli(elsewhere, ["-C", r.dir, "--store", "repo", "restore", snap.id]);
    expect(restore.status).toBe(0);
    const hint = /undo with: (ghostcommit .*)$/m.exec(restore.stdout)?.[1];
    expect(hint).toMatch(/^ghostcommit -C \S+ --store repo restore [0-9a-f]{12}$/);
    expect(r.read("f.txt")).toBe("v1\n");
    // The hint as a shell runs it, from another directory, with `ghostcommit` as the CLI.
    const undo = spawnSync(
      "/bin/sh",
      ["-c", hint!.replace(/^ghostcommit/, `'${process.execPath}' '${CLI}'`)],
      {
        cwd: elsewhere,
        env: r.sandbox.env,
        encoding: "utf8",
      },
    );
    expect(undo.status, undo.stderr).toBe(0);
    expect(r.read("f.txt")).toBe("v2\n");
  });
});

describe("human output", () => {
  it("quotes a name with a newline, tab, quote or backslash as git does; JSON keeps it as it is", async () => {
    const r = repo({ "a.txt": "a\n" });
    const snap = await snapshotIn(r);
    r.write({ "new\nline": "x", "tab\there": "y", 'q"uote': "z", "plain é.txt": "w" });
    expect(r.cli(["diff", snap.id]).stdout.split("\n").filter(Boolean)).toEqual([
      'A\t"new\\nline"',
      "A\tplain é.txt",
      'A\t"q\\"uote"',
      'A\t"tab\\there"',
    ]);
    expect(r.cli(["diff", "--json", snap.id]).json.map((e: any) => e.path)).toContain("new\nline");
    const restore = r.cli(["restore", snap.id]).stdout;
    expect(restore).toContain('  gone   "new\\nline"\n');
    expect(r.exists("new\nline")).toBe(false);
  });

  it("quotes excluded names and the paths of a refusal, so none splits a line or reaches the terminal raw", () => {
    const big = "big\x1b]0;pwned\x07.bin";
    const r = repo({ "a.txt": "a\n" });
    r.write({ [big]: Buffer.alloc(11 << 20), "we\nird/node_modules/x/i.js": "1" });
    const snap = r.cli(["snapshot"]);
    const excluded = [
      '  excluded "big\\033]0;pwned\\a.bin" (large file, 11 MiB)',
      '  excluded "we\\nird/node_modules/" (dependency dir, 1 file)',
    ];
    expect(snap.stdout.split("\n").slice(1, 3)).toEqual(excluded);
    const id = snap.stdout.split(" ")[1];
    expect(r.cli(["show", id]).stdout).toContain(`${excluded.join("\n")}\n`);

    const odd = "x\x1b[2Jy\nz";
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.write({ [odd]: "turn\n" });
    r.ok("turn", "end", "--session", "s", "--turn", "1");
    r.write({ [odd]: "edited by hand\n" });
    const refused = r.cli(["rewind", "--to", "1"]);
    expect(refused.status).toBe(3);
    expect(refused.stderr).toBe(
      'ghostcommit: rewind refused: 1 file was changed since session s last changed it ("x\\033[2Jy\\nz"); nothing was changed; `ghostcommit rewind --session s --to 1 -- PATH…` rewinds only the paths it names, --force overwrites\n',
    );
  });
});

describe("show, diff and drop", () => {
  it("show lists the snapshot's files and its metadata", async () => {
    const r = repo({ "a.txt": "a\n", "d/b.txt": "b\n" });
    r.write({ "u.txt": "u\n", "node_modules/x/y.js": "y" });
    const snap = await snapshotIn(r, { message: "look" });
    const shown = r.ok("show", snap.id);
    expect(shown).toMatchObject({
      id: snap.id,
      parent: snap.parent,
      createdAt: snap.createdAt,
      message: "look",
      fileCount: 3,
      excluded: [{ path: "node_modules", reason: "dependency-dir", files: 1 }],
    });
    expect(shown.files.sort()).toEqual(["a.txt", "d/b.txt", "u.txt"]);
    expect(shown.files).toHaveLength(shown.fileCount);
  });

  it("diff reports added, modified, deleted and type-changed paths against the work tree and between snapshots", async () => {
    const r = repo({ "mod.txt": "1\n", "del.txt": "d\n", typ: "file\n", "same.txt": "s\n" });
    const one = await snapshotIn(r);
    r.write({ "mod.txt": "2\n", "add.txt": "a\n" });
    r.remove("del.txt");
    r.remove("typ");
    r.symlink("same.txt", "typ");
    const statuses = (list: any[]) => Object.fromEntries(list.map((e) => [e.path, e.status]));
    const expected = { "add.txt": "added", "del.txt": "deleted", "mod.txt": "modified", typ: "type-changed" };
    const live = r.ok("diff", one.id);
    expect(statuses(live)).toEqual(expected);
    expect(live.find((e: any) => e.path === "typ")).toMatchObject({ oldMode: "100644", newMode: "120000" });
    expect(live.find((e: any) => e.path === "add.txt").oldMode).toBeUndefined();
    expect(live.find((e: any) => e.path === "del.txt").newMode).toBeUndefined();
    const two = await snapshotIn(r);
    expect(statuses(r.ok("diff", one.id, two.id))).toEqual(expected);
    expect(r.ok("diff", two.id)).toEqual([]);
    expect(r.ok("list")).toHaveLength(2); // diff against the work tree takes no snapshot

    const nameStatus = r.cli(["diff", "--name-status", one.id, two.id]);
    expect(nameStatus.status).toBe(0);
    expect(nameStatus.stdout.trim().split("\n").sort()).toEqual([
      "A\tadd.txt",
      "D\tdel.txt",
      "M\tmod.txt",
      "T\ttyp",
    ]);
    const stat = r.cli(["diff", "--stat", one.id, two.id]);
    expect(stat.stdout).toMatch(/mod\.txt\s+\|\s+2 \+-/);
    expect(stat.stdout).toMatch(/4 files changed/);
    const patch = r.cli(["diff", "--patch", one.id]);
    expect(patch.stdout).toContain("-1\n+2\n");
    expect(patch.stdout).toContain("+++ b/add.txt");
  });

  // Found in a trial: a user's core.abbrev, diff.suppressBlankEmpty, core.bigFileThreshold or a
  // `-diff` in their global attributes file changed the text, or made it "Binary files differ".
  it("prints the same diff text whatever the user's git config says about diffs", async () => {
    const r = repo({ "doc.md": "one\n\nthree\n" });
    const one = (await snapshotIn(r)).id;
    r.write({ "doc.md": "one\n\nTHREE\n" });
    const two = (await snapshotIn(r)).id;
    const texts = () => ["--patch", "--stat"].map((flag) => r.cli(["diff", flag, one, two]).stdout);
    const plain = texts();
    expect(plain[0]).toContain("\n \n-three\n+THREE\n");
    const globalConfig = sandbox.env.GIT_CONFIG_GLOBAL!;
    const saved = readFileSync(globalConfig, "utf8");
    const attributes = path.join(sandbox.home, "user-attributes");
    writeFileSync(attributes, "*.md -diff\n");
    writeFileSync(
      globalConfig,
      `${saved}[core]\n\tabbrev = 5\n\tbigFileThreshold = 1\n\tattributesFile = ${attributes}\n[diff]\n\tsuppressBlankEmpty = true\n`,
    );
    try {
      expect(texts()).toEqual(plain);
    } finally {
      writeFileSync(globalConfig, saved);
    }
  });

  it("drop forgets snapshots; the others still restore", async () => {
    const r = repo({ "a.txt": "a\n" });
    const keep = (await snapshotIn(r)).id;
    r.write({ "a.txt": "b\n" });
    const gone = (await snapshotIn(r)).id;
    expect(r.ok("drop", gone)).toEqual({ dropped: [gone] });
    expect(r.ok("list").map((s: any) => s.id)).toEqual([keep]);
    expect(r.cli(["show", gone, "--json"]).json.error.code).toBe("not-found");
    r.ok("restore", keep);
    expect(r.read("a.txt")).toBe("a\n");
  });

  it("two snapshots of an identical tree in the same second get distinct ids and exact order", () => {
    const r = repo();
    const a = r.ok("snapshot").id;
    const b = r.ok("snapshot").id;
    expect(a).not.toBe(b);
    const listed = r.ok("list");
    expect(listed.map((s: any) => s.id)).toEqual([b, a]);
    expect(listed[0].createdAt > listed[1].createdAt).toBe(true);
  });
});

describe.runIf(existsSync("/proc/self"))("a data directory where no directory can be made", () => {
  it("fails at once with a message instead of spinning: /proc answers ENOENT to every mkdir", () => {
    const r = repo();
    const run = (args: string[], input?: string) =>
      spawnSync(process.execPath, [CLI, ...args], {
        cwd: r.dir,
        env: { ...r.sandbox.env, GHOSTCOMMIT_HOME: "/proc" },
        input,
        encoding: "utf8",
        timeout: 20_000,
      });
    const snap = run(["snapshot"]);
    expect([snap.status, snap.stderr]).toEqual([
      1,
      "ghostcommit: cannot create this workspace's store in /proc: no such file or directory (ENOENT)\n",
    ]);
    // A hook logs the failure (not there either) and still answers the agent at once.
    const event = { session_id: "s", hook_event_name: "UserPromptSubmit", prompt: "hi", cwd: r.dir };
    const hook = run(["hook", "claude-code"], JSON.stringify(event));
    expect(hook.status).toBe(0);
    expect(hook.stdout).toContain("cannot create this workspace's store in /proc");
    // doctor says so too (write permission alone passed as root), and leaves nothing behind
    const doctor = run(["doctor", "--json"]);
    expect(doctor.status).toBe(1);
    expect(JSON.parse(doctor.stdout).problems).toEqual([
      {
        code: "data-dir-unusable",
        message:
          "the data directory cannot hold a store: no directory can be made in /proc (ENOENT) (GHOSTCOMMIT_HOME sets it)",
      },
    ]);
  });
});

describe("a relative data directory", () => {
  it("GHOSTCOMMIT_HOME is refused; a relative XDG_DATA_HOME is ignored, as the XDG spec says", () => {
    const r = repo({ "a.txt": "a\n", "sub/b.txt": "b\n" });
    const env = (extra: NodeJS.ProcessEnv) => ({ ...r.sandbox.env, ...extra });
    const run = (cwd: string, extra: NodeJS.ProcessEnv, ...args: string[]) =>
      spawnSync(process.execPath, [CLI, "-C", r.dir, ...args, "--json"], {
        cwd,
        env: env(extra),
        encoding: "utf8",
      });
    const refused = run(r.dir, { GHOSTCOMMIT_HOME: "data" }, "snapshot");
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stdout).error).toEqual({
      code: "bad-config",
      message:
        'GHOSTCOMMIT_HOME must be an absolute path, not "data": relative, it would name another directory from each directory a command runs in',
    });
    expect(r.exists("data")).toBe(false);
    // An agent's prompt is told why its work has no snapshots.
    const event = { session_id: "s", hook_event_name: "UserPromptSubmit", prompt: "hi", cwd: r.dir };
    const hook = spawnSync(process.execPath, [CLI, "hook", "claude-code"], {
      env: env({ GHOSTCOMMIT_HOME: "data" }),
      input: JSON.stringify(event),
      encoding: "utf8",
    });
    expect(hook.status).toBe(0);
    expect(JSON.parse(hook.stdout).systemMessage).toContain("GHOSTCOMMIT_HOME must be an absolute path");
    // Taken from one directory, listed from another: the same store, in the default place.
    const xdg = { GHOSTCOMMIT_HOME: undefined, XDG_DATA_HOME: "xdg-data" };
    const snap = JSON.parse(run(r.dir, xdg, "snapshot").stdout);
    expect(JSON.parse(run(r.path("sub"), xdg, "list").stdout).map((s: any) => s.id)).toEqual([snap.id]);
    expect([r.exists("xdg-data"), r.exists("sub/xdg-data")]).toEqual([false, false]);
    expect(existsSync(path.join(r.sandbox.home, ".local", "share", "ghostcommit", "workspaces"))).toBe(true);
  });
});
