import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/repo.js";
import { fileSandbox, gitDirDigest } from "../helpers/support.js";
import { snapshotIn, turn } from "../session/support.js";
import { listIn } from "../helpers/in-process.js";

const { sandbox, repo } = fileSandbox();

/** Every entry under the data directory, so a test can tell that nothing (not even a store) was created. */
function dataListing(): string[] {
  const home = sandbox.env.GHOSTCOMMIT_HOME!;
  return readdirSync(home, { recursive: true }).map(String).sort();
}

describe("restore and diff of chosen paths", () => {
  it("restores only the named file and directory, proving deletions inside the named directory", async () => {
    const r = repo({ ".gitignore": "*.log\n", "a.txt": "a0\n", "d/b.txt": "b0\n", "e/c.txt": "c0\n" });
    r.write({ "d/run.log": "log\n" }); // ignored when the snapshot is taken: not proven absent
    const snap = await snapshotIn(r);
    r.write({ "a.txt": "a1\n", "d/b.txt": "b1\n", "d/new.txt": "n\n", "e/c.txt": "c1\n" });
    r.write({ "e/new.txt": "keep\n", ".gitignore": "# nothing ignored now\n" });
    const index = gitDirDigest(r);

    const plan = r.cli(["restore", snap.id, "--dry-run", "--json", "--", "d", "a.txt"]);
    expect(plan.status).toBe(0);
    expect(plan.json).toMatchObject({
      written: ["a.txt", "d/b.txt"],
      deleted: ["d/new.txt"],
      safety: null,
      dryRun: true,
    });
    expect(r.read("a.txt")).toBe("a1\n");

    const report = r.ok("restore", snap.id, "d", "a.txt");
    expect(report).toMatchObject({
      written: ["a.txt", "d/b.txt"],
      deleted: ["d/new.txt"],
      skipped: [{ path: "d/run.log", reason: "excluded" }],
    });
    expect(report.safety).toMatch(/^[0-9a-f]{40}$/);
    // Outside the named paths nothing changed; the log inside them, ignored then, was not proven absent.
    expect([r.read("e/c.txt"), r.read("e/new.txt"), r.read("d/run.log")]).toEqual([
      "c1\n",
      "keep\n",
      "log\n",
    ]);
    expect(gitDirDigest(r)).toEqual(index);

    // The safety snapshot undoes it.
    r.ok("restore", report.safety);
    expect([r.read("a.txt"), r.read("d/b.txt"), r.read("d/new.txt")]).toEqual(["a1\n", "b1\n", "n\n"]);
  });

  it("puts back a directory where a file now stands, naming the directory or a file below it", async () => {
    const r = repo({ "keep.txt": "k\n", "d/x.txt": "x\n", "d/y.txt": "y\n" });
    const snap = await snapshotIn(r);
    r.remove("d");
    r.write({ d: "now a file\n", "keep.txt": "k2\n" });
    const some = r.ok("restore", snap.id, "d/x.txt");
    expect(some).toMatchObject({ written: ["d/x.txt"], deleted: ["d"] });
    expect([r.read("d/x.txt"), r.exists("d/y.txt"), r.read("keep.txt")]).toEqual(["x\n", false, "k2\n"]);

    r.remove("d");
    r.write({ d: "a file again\n" });
    const all = r.ok("restore", snap.id, "d");
    expect(all).toMatchObject({ written: ["d/x.txt", "d/y.txt"], deleted: ["d"] });
    expect(r.read("keep.txt")).toBe("k2\n");
  });

  it("takes a named path as the snapshot's, never through a directory that has become a symlink", async () => {
    const r = repo({ "keep.txt": "k\n" });
    r.write({ "d/f": "old\n" });
    const snap = await snapshotIn(r);
    // `d` is now a link to another directory of the workspace, holding a file of the same name.
    r.remove("d");
    r.write({ "mywork/f": "precious\n" });
    r.symlink("mywork", "d");
    // d/g is mywork/g through the link: no path of the workspace, nor of the snapshot.
    r.write({ "mywork/g": "only here\n" });
    expect(r.cli(["restore", snap.id, "d/g"]).stderr).toContain("d/g: no such path in the snapshot");
    const diff = r.cli(["diff", "--json", snap.id, "--", "d/f"]);
    expect(diff.json.map((e: any) => `${e.status} ${e.path}`)).toEqual(["deleted d/f"]);
    const report = r.ok("restore", snap.id, "d/f");
    expect(report).toMatchObject({ written: ["d/f"], deleted: ["d"] });
    expect([r.read("mywork/f"), r.read("d/f"), lstatSync(r.path("d")).isDirectory()]).toEqual([
      "precious\n",
      "old\n",
      true,
    ]);
    // The workspace named through a link above it still resolves: that link is not the snapshot's.
    const linkedRoot = path.join(path.dirname(r.dir), "linked-root");
    symlinkSync(r.dir, linkedRoot);
    const through = r.cli(["diff", "--json", snap.id, "--", path.join(linkedRoot, "mywork/f")]);
    expect(through.json).toEqual([expect.objectContaining({ status: "added", path: "mywork/f" })]);
  });

  it("diffs only the named paths, after -- or after the ids", async () => {
    const r = repo({ "a.txt": "a\n", "d/b.txt": "b\n" });
    const first = await snapshotIn(r);
    r.write({ "a.txt": "a2\n", "d/b.txt": "b2\n", "d/c.txt": "c\n" });
    const second = await snapshotIn(r);
    const byPath = (entries: any[]) => entries.map((e) => `${e.status} ${e.path}`);
    expect(byPath(r.ok("diff", first.id, "d"))).toEqual(["modified d/b.txt", "added d/c.txt"]);
    expect(byPath(r.cli(["diff", "--json", first.id, second.id, "--", "a.txt"]).json)).toEqual([
      "modified a.txt",
    ]);
    expect(byPath(r.ok("diff", first.id.slice(0, 12), second.id.slice(0, 12), "d/c.txt"))).toEqual([
      "added d/c.txt",
    ]);
    const names = r.cli(["diff", "--name-status", first.id, second.id, "--", "d"]);
    expect(names.stdout.trim().split("\n")).toEqual(["M\td/b.txt", "A\td/c.txt"]);
  });

  it("takes a name that is not UTF-8 as it was shown (U+FFFD for its odd bytes), in a rewind, a restore and a diff", async () => {
    // Found in a trial: the picker offers "only the other files" from a plan's shown names, and
    // a rewind of those refused a Latin-1 name as naming nothing.
    const r = repo({ "a.txt": "a0\n" });
    const raw = Buffer.concat([Buffer.from(`${r.dir}/lat`), Buffer.from([0xe9]), Buffer.from(".txt")]);
    const shown = "lat\ufffd.txt";
    await turn(r, "s", "1", () => {
      writeFileSync(raw, "agent\n");
      r.write({ "a.txt": "a1\n" });
    });
    const plan = r.ok("rewind", "--session", "s", "--to", "1", "--dry-run");
    expect(plan.deleted).toEqual([shown]);
    const one = r.cli(["rewind", "--session", "s", "--to", "1", "--json", "--", shown]).json;
    expect([one.written, one.deleted, r.read("a.txt")]).toEqual([[], [shown], "a1\n"]);
    expect(() => readFileSync(raw)).toThrow();
    r.ok("redo", "--session", "s");
    expect(readFileSync(raw, "utf8")).toBe("agent\n");
    const snap = await snapshotIn(r);
    writeFileSync(raw, "changed\n");
    expect(r.cli(["diff", snap.id, "--json", "--", shown]).json.map((e: { path: string }) => e.path)).toEqual(
      [shown],
    );
    expect(r.cli(["restore", snap.id, "--json", "--", shown]).json.written).toEqual([shown]);
    expect(readFileSync(raw, "utf8")).toBe("agent\n");
  });

  it("refuses a path that names nothing (a typo, a pattern) as a usage error, taking no safety snapshot", async () => {
    const r = repo({ "fe/main.js": "a\n", "keep.txt": "k\n" });
    const snap = await snapshotIn(r);
    await turn(r, "s", "1", () => r.write({ "fe/main.js": "b\n" }));
    const listed = (await listIn(r)).length;
    for (const [args, message] of [
      [["restore", snap.id, "typo/main.js"], "typo/main.js: no such path in the snapshot or the workspace"],
      [["diff", snap.id, "--", "fe/*.js"], "fe/*.js: no such path in the snapshot or the workspace"],
      [["rewind", "--to", "1", "fe/*.js"], "fe/*.js: no such path in the snapshot or the workspace"],
    ] as const) {
      const result = r.cli(["--json", ...args]);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(`ghostcommit: ${message} (paths are not patterns)`);
    }
    expect([r.read("fe/main.js"), (await listIn(r)).length, r.cli(["redo"]).status]).toEqual([
      "b\n",
      listed,
      1,
    ]);
    // A path the snapshot holds, or one on disk only, is fine for a restore; a rewind refuses a path
    // no rewound turn changed, which would rewind nothing.
    expect(r.cli(["rewind", "--dry-run", "--to", "1", "keep.txt"]).stderr).toContain(
      "keep.txt: not changed by turn 1 of session s",
    );
    expect(r.ok("rewind", "--to", "1", "fe")).toMatchObject({ written: ["fe/main.js"] });
    r.write({ "new.txt": "n\n" });
    expect(r.ok("restore", snap.id, "new.txt")).toMatchObject({ deleted: ["new.txt"] });
  });

  it("says a named path the snapshot cannot hold (in a submodule, ignored) is left as it was, rather than writing nothing without a word", () => {
    const lib = repo({ "s.txt": "lib\n" });
    const r = repo({ ".gitignore": "node_modules/\n", "a.txt": "a\n" });
    r.addSubmodule(lib, "vendor/lib");
    r.write({ "node_modules/p/f.js": "dep\n" });
    const snap = r.ok("snapshot").id;
    r.write({ "vendor/lib/s.txt": "changed in the submodule\n", "node_modules/p/f.js": "dep, changed\n" });
    const run = r.cli(["restore", snap, "--json", "--", "vendor/lib/s.txt", "node_modules/p/f.js", "a.txt"]);
    expect(run.status, run.stderr).toBe(0);
    const restored = run.json;
    expect(restored).toMatchObject({ written: [], deleted: [] });
    expect(restored.skipped).toEqual([
      { path: "vendor/lib/s.txt", reason: "excluded", detail: "submodule" },
      { path: "node_modules/p/f.js", reason: "excluded" },
    ]);
    expect([r.read("vendor/lib/s.txt"), r.read("node_modules/p/f.js")]).toEqual([
      "changed in the submodule\n",
      "dep, changed\n",
    ]);
  });

  it("says a named path inside a submodule that moved to another commit since the snapshot is left as it is", () => {
    const lib = repo({ "s.txt": "lib\n" });
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "mod");
    const snap = r.ok("snapshot").id;
    r.write({ "mod/s.txt": "moved\n" });
    sandbox.git(path.join(r.dir, "mod"), "commit", "-qam", "moved");
    const skipped = [{ path: "mod/s.txt", reason: "excluded", detail: "submodule" }];
    for (const dryRun of [["--dry-run"], []]) {
      const run = r.cli(["restore", snap, "--json", ...dryRun, "--", "mod/s.txt"]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.json).toMatchObject({ written: [], deleted: [], skipped });
    }
    expect(r.read("mod/s.txt")).toBe("moved\n");
  });

  it("diffs a path inside a submodule as the submodule's commit, the only part of it a snapshot holds", () => {
    const lib = repo({ "s.txt": "lib\n" });
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "mod");
    const first = r.ok("snapshot").id;
    r.write({ "mod/s.txt": "moved\n", "a.txt": "a1\n" });
    sandbox.git(path.join(r.dir, "mod"), "commit", "-qam", "moved");
    const second = r.ok("snapshot").id;
    const moved = [{ path: "mod", status: "modified", oldMode: "160000", newMode: "160000" }];
    const diff = (...ids: string[]) => r.cli(["diff", "--json", ...ids, "--", "mod/s.txt"]).json;
    // Against the working tree and between the snapshots (where the file itself is in neither tree).
    expect(diff(first)).toEqual(moved);
    expect(diff(first, second)).toEqual(moved);
    const human = r.cli(["diff", first, "--", "mod/s.txt"]);
    expect(human.stdout).toBe("M\tmod (submodule: the commit checked out in it)\n");
    expect(r.cli(["diff", first, second, "--patch", "--", "mod/s.txt"]).stdout).toMatch(
      /^\+Subproject commit [0-9a-f]{40}$/m,
    );
    // Not moved: nothing to show, and no "no such path" either.
    expect(diff(second)).toEqual([]);
    // A submodule replaced by a file is said to be so, not called a commit change (found in a trial).
    r.remove("mod");
    r.write({ mod: "a file now\n" });
    expect(r.cli(["diff", second, "--", "mod"]).stdout).toBe("T\tmod (a submodule, now a file)\n");
  });

  it("refuses a rewind of a path inside a submodule the turn moved, saying it is inside that submodule", () => {
    const lib = repo({ "s.txt": "lib\n" });
    const r = repo({ "a.txt": "a\n" });
    r.addSubmodule(lib, "mod");
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.write({ "mod/s.txt": "moved\n", "a.txt": "a1\n" });
    sandbox.git(path.join(r.dir, "mod"), "commit", "-qam", "moved");
    r.ok("turn", "end", "--session", "s");
    const run = r.cli(["rewind", "--json", "--session", "s", "--to", "1", "--", "mod/s.txt"]);
    expect(run.status, run.stderr).toBe(2);
    expect(run.json.error.message).toBe(
      "mod/s.txt: not changed by turn 1 of session s, so there is nothing to rewind there (it is inside the repository mod, which a rewind never enters)",
    );
    expect([r.read("mod/s.txt"), r.read("a.txt")]).toEqual(["moved\n", "a1\n"]);
  });

  it("refuses a path outside the workspace as a usage error that writes nothing, not even a store", () => {
    const r = repo({ "a.txt": "a\n" });
    const sub = path.join(r.dir, "sub");
    r.write({ "sub/f.txt": "f\n" });
    const before = dataListing();
    for (const args of [
      ["restore", "0123456789abc", "../outside.txt"],
      ["restore", "0123456789abc", "--", "/etc/passwd"],
      ["diff", "0123456789abc", "--", "../a.txt"],
      ["rewind", "--to", "1", "../a.txt"],
    ]) {
      const result = sandbox.cli(sub, ["--json", ...args]);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.json.error.code).toBe("usage");
      expect(result.stderr).toMatch(/^ghostcommit: path is outside the workspace/);
    }
    expect(dataListing()).toEqual(before);
    expect(r.read("a.txt")).toBe("a\n");
  });

  it("quotes the paths a usage error names, so a newline in one cannot split the one-line message", async () => {
    const r = repo({ "a.txt": "a\n" });
    const snap = await snapshotIn(r);
    for (const [args, message] of [
      [["diff", snap.id, "--", "no\nsuch"], '"no\\nsuch": no such path in the snapshot or the workspace'],
      [
        ["restore", snap.id, "--", "../x\ny"],
        'path is outside the workspace: "../x\\ny" (paths are relative',
      ],
      [["diff", snap.id, "no\tid", "--", "a.txt"], 'not a snapshot id: "no\\tid" (paths go after --)'],
    ] as const) {
      const result = r.cli(args as unknown as string[]);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.stderr.split("\n")).toEqual([expect.stringContaining(`ghostcommit: ${message}`), ""]);
    }
  });

  it("refuses a path argument that is not UTF-8 as such, changing nothing; its directory can be named", async () => {
    const r = repo({ "a.txt": "a\n" });
    const bad = (dir: string) => Buffer.concat([Buffer.from(`${r.dir}/${dir}`), Buffer.from([0x62, 0xff])]);
    r.write({ "d/\ufffd.txt": "v1\n" }); // a name really spelled with U+FFFD
    writeFileSync(bad(""), "v1\n");
    writeFileSync(bad("d/"), "v1\n");
    const snap = await snapshotIn(r);
    await turn(r, "s", "1", () => {
      writeFileSync(bad(""), "v2\n");
      writeFileSync(bad("d/"), "v2\n");
    });
    const listed = (await listIn(r)).length;
    // The shell puts the byte 0xff in the last argument, after `prefix`: Node cannot decode it.
    const withBadArg = (args: string[], prefix = "") =>
      spawnSync(
        "/bin/sh",
        ["-c", 'exec "$@" "$PREFIX$(printf "b\\377")"', "sh", process.execPath, CLI, ...args],
        {
          cwd: r.dir,
          env: { ...sandbox.env, PREFIX: prefix },
          encoding: "utf8",
        },
      );
    for (const [args, prefix] of [
      [["restore", snap.id, "--"], ""],
      [["diff", snap.id, "--"], ""],
      [["rewind", "--to", "1"], ""],
      [["snapshot", "--include"], ""],
      [["snapshot"], "--include="],
      [["touch"], ""],
      [["list", "-C"], ""],
    ] as const) {
      const result = withBadArg(["--json", ...args], prefix);
      expect(result.status, args.join(" ")).toBe(2);
      expect(JSON.parse(result.stdout).error.code).toBe("usage");
      expect(result.stderr).toMatch(
        /^ghostcommit: path argument is not valid UTF-8, so it cannot be passed on the command line: b\ufffd \(/,
      );
    }
    expect([readFileSync(bad(""), "utf8"), (await listIn(r)).length]).toEqual(["v2\n", listed]);
    // Its directory names it; a name spelled with U+FFFD is an ordinary one.
    expect(r.ok("restore", snap.id, "d").written).toEqual(["d/b\ufffd"]);
    expect(readFileSync(bad("d/"), "utf8")).toBe("v1\n");
    r.write({ "d/\ufffd.txt": "v2\n" });
    expect(r.ok("restore", snap.id, "d/\ufffd.txt").written).toEqual(["d/\ufffd.txt"]);
  });

  it("refuses to run in a current directory whose path is not UTF-8, never in the one spelled with U+FFFD beside it", () => {
    const parent = sandbox.dir("names");
    const bad = Buffer.concat([Buffer.from(`${parent}/p`), Buffer.from([0xff])]);
    const sibling = path.join(parent, "p\ufffd"); // how Node reads the other one's path
    mkdirSync(bad);
    mkdirSync(sibling);
    writeFileSync(Buffer.concat([bad, Buffer.from("/mine.txt")]), "mine\n");
    writeFileSync(path.join(sibling, "theirs.txt"), "theirs\n");
    const inBadDir = (args: string[]) =>
      spawnSync(
        "/bin/sh",
        ["-c", 'cd "$PARENT/p$(printf "\\377")" && exec "$@"', "sh", process.execPath, CLI, ...args],
        {
          env: { ...sandbox.env, PARENT: parent },
          encoding: "utf8",
        },
      );
    for (const args of [["snapshot"], ["list"], ["restore", "0123456789abcdef"], ["snapshot", "-C", "."]]) {
      const result = inBadDir(["--json", ...args]);
      expect(result.status, args.join(" ")).toBe(1);
      expect(JSON.parse(result.stdout).error.code).toBe("not-a-workspace");
      expect(result.stderr).toBe(
        `ghostcommit: the current directory's path is not valid UTF-8, so it cannot be named (it reads as ${sibling}): run ghostcommit from a directory above it with -C, or rename the directory\n`,
      );
    }
    // Before, the snapshot was of the sibling's files, and a restore would have changed them.
    expect(sandbox.cli(sibling, ["list", "--json"]).json).toEqual([]);
    expect(sandbox.ok(parent, "snapshot", "--json").fileCount).toBe(2);
  });
});
