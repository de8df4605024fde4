import path from "node:path";
import { describe, expect, it } from "vitest";
import { Repo } from "../helpers/repo.js";
import { sessionSandbox, snapshotIn, turn } from "./support.js";
import { listIn, logIn } from "../helpers/in-process.js";

const { repo } = sessionSandbox();

// A generator run over two turns: its directory is captured after the first and grows past the
// large-dir limit (here 5 files, as `.ghostcommit.json` may set it) in the second, whose
// after-snapshot then leaves the whole directory out.
async function generatorOverTwoTurns() {
  const r = repo({ ".ghostcommit.json": '{"largeDirFiles": 5}\n', "src/a.ts": "a1\n" });
  const gen = (from: number, to: number) => {
    for (let i = from; i <= to; i++) r.write({ [`src/gen/f${i}.ts`]: `g${i}\n` });
  };
  await turn(r, "s", "t1", () => gen(1, 4));
  const second = await turn(r, "s", "t2", () => {
    gen(5, 7);
    r.write({ "src/a.ts": "a2\n" });
  });
  return { r, second };
}

const firstFour = ["src/gen/f1.ts", "src/gen/f2.ts", "src/gen/f3.ts", "src/gen/f4.ts"];

describe("a directory a later turn's snapshot leaves out (grown past the large-dir limit)", () => {
  it("is not claimed by that turn, and rewinding both turns is no conflict: the first turn's files go, the rest stay", async () => {
    const { r, second } = await generatorOverTwoTurns();
    expect(second.changed).toEqual(["src/a.ts"]);
    expect((await logIn(r, "s")).map((t: any) => t.changed.length)).toEqual([4, 1]);

    const before = (await listIn(r)).length;
    const preview = r.cli(["rewind", "--to", "t1", "--dry-run"]);
    expect(preview.status, preview.stderr).toBe(0);
    // It deletes files inside src/gen, so it does not say the directory is left as it is.
    expect(preview.stdout).toContain("skip   src/gen (excluded: what in it the target or the safety");
    expect(preview.stdout).not.toContain("src/gen (excluded: the target or the safety snapshot lacks it");
    const done = r.cli(["rewind", "--to", "t1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json).toMatchObject({
      written: ["src/a.ts"],
      skipped: [{ path: "src/gen", reason: "excluded" }],
    });
    expect(done.json.deleted.sort()).toEqual(firstFour);
    expect((await listIn(r)).length).toBe(before + 1); // its safety snapshot
    expect([r.read("src/a.ts"), ...[5, 6, 7].map((i) => r.read(`src/gen/f${i}.ts`))]).toEqual([
      "a1\n",
      "g5\n",
      "g6\n",
      "g7\n",
    ]);
    expect(firstFour.some((p) => r.exists(p))).toBe(false);
    r.ok("redo", "--session", "s");
    expect(firstFour.map((p) => r.read(p))).toEqual(["g1\n", "g2\n", "g3\n", "g4\n"]);
  });
});

describe("a rewind refused by its last check, once the work tree is captured", () => {
  it("writes no safety snapshot, as a refusal changes nothing", async () => {
    // The turn deleted old.txt; a person made it again. Only the capture tells what it holds.
    const r = repo({ "old.txt": "old\n", "b.txt": "b0\n" });
    await turn(r, "s", "1", () => {
      r.remove("old.txt");
      r.write({ "b.txt": "b1\n" });
    });
    r.write({ "old.txt": "made again by hand\n" });
    const before = (await listIn(r)).map((s: any) => s.id);
    const refused = r.cli(["rewind", "--to", "1", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["old.txt"]);
    expect((await listIn(r)).map((s: any) => s.id)).toEqual(before);
    expect([r.read("old.txt"), r.read("b.txt")]).toEqual(["made again by hand\n", "b1\n"]);
  });
});

describe("a file a turn grows past the size limit and a later turn shrinks back under it", () => {
  it("goes back to its bytes before the first turn, which that turn's before-snapshot holds, listed once", async () => {
    const r = repo({ ".ghostcommit.json": '{"largeFileBytes": 1000}\n', "README.md": "hi\n" });
    const original = `${"u".repeat(500)}\n`; // the user's own untracked file, under the limit
    r.write({ "data.bin": original });
    await turn(r, "s", "1", () => r.write({ "data.bin": "g".repeat(3000) })); // past the limit: left out
    await turn(r, "s", "2", () => r.write({ "data.bin": "small\n" })); // under it again
    const done = r.cli(["rewind", "--to", "1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json.written).toEqual(["data.bin"]);
    expect(done.json.skipped).toEqual([]);
    expect(r.read("data.bin")).toBe(original);
    r.ok("redo", "--session", "s");
    expect(r.read("data.bin")).toBe("small\n");
  });

  it("is left, once, when it is still past the limit (the safety snapshot could not hold it)", async () => {
    const r = repo({ ".ghostcommit.json": '{"largeFileBytes": 1000}\n', "README.md": "hi\n" });
    r.write({ "data.bin": "small\n" });
    await turn(r, "s", "1", () => r.write({ "data.bin": "g".repeat(3000) }));
    const done = r.cli(["rewind", "--to", "1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json.skipped).toEqual([{ path: "data.bin", reason: "excluded" }]);
    expect(r.read("data.bin")).toBe("g".repeat(3000));
  });
});

describe("a dependency directory left out both before and after a turn", () => {
  it("is listed as skipped by a rewind, which cannot undo what the turn changed in it", async () => {
    // A Maven project whose Java package is named `target` (com.acme.target), a dependency-dir name.
    const d = "src/main/java/com/acme/target";
    const r = repo({ [`${d}/Foo.java`]: "public class Foo {}\n" });
    r.write({ [`${d}/UserDraft.java`]: "class UserDraft { /* hours of work */ }\n" });
    await turn(r, "s", "1", () => {
      r.write({ [`${d}/Foo.java`]: "public class Foo { int x; }\n" });
      r.write({ [`${d}/Bar.java`]: "class Bar {}\n" });
    });
    const done = r.cli(["rewind", "--to", "1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json.written).toEqual([`${d}/Foo.java`]);
    expect(done.json.skipped).toEqual([{ path: d, reason: "excluded" }]);
    expect(r.read(`${d}/Bar.java`)).toBe("class Bar {}\n");
  });
});

describe("diff of a turn's two snapshots when the after-snapshot left out what the before held", () => {
  it("does not show the files left out as deleted: they were not captured, and they are still on disk", async () => {
    const r = repo({
      ".ghostcommit.json": '{"largeDirFiles": 5, "largeFileBytes": 1000}\n',
      "a.txt": "a1\n",
    });
    for (let i = 1; i <= 4; i++) r.write({ [`data/f${i}.txt`]: `v1 ${i}\n` });
    r.write({ "dump.sql": "x".repeat(500) });
    await turn(r, "s", "1", () => {
      for (let i = 5; i <= 7; i++) r.write({ [`data/f${i}.txt`]: `v2 ${i}\n` }); // past largeDirFiles
      r.write({ "dump.sql": "x".repeat(3000) }); // past largeFileBytes
      r.write({ "a.txt": "a2\n" });
    });
    const [t] = await logIn(r, "s");
    expect(r.ok("diff", t.before, t.after)).toEqual([
      { path: "a.txt", status: "modified", oldMode: "100644", newMode: "100644" },
    ]);
    const stat = r.cli(["diff", t.before, t.after, "--stat"]);
    expect(stat.stdout).toContain("a.txt");
    expect(stat.stdout).not.toContain("dump.sql");
    expect(stat.stdout).not.toContain("data/");
    // Nothing differs: a patch prints nothing, as git's does (a tool such as git apply reads it).
    expect(r.cli(["diff", t.before, t.after, "--patch", "--", "dump.sql"]).stdout).toBe("");
    expect(r.cli(["diff", t.before, t.after, "--", "dump.sql"]).stdout).toBe("no differences\n");
    // Against the working tree, as between two snapshots: a file grown past the limit since is
    // not deleted, and one the snapshot left out that is small now is not added.
    r.write({ "small.sql": "y".repeat(3000), "dump.sql": "x".repeat(500) });
    const withBig = await snapshotIn(r);
    r.write({ "small.sql": "y\n", "dump.sql": "x".repeat(3000), "a.txt": "a3\n" });
    const live = r.ok("diff", withBig.id);
    expect(live.map((e: { path: string; status: string }) => `${e.status} ${e.path}`)).toEqual([
      "modified a.txt",
    ]);
    expect(r.cli(["diff", withBig.id, "--name-status"]).stdout.trim()).toBe("M\ta.txt");
  });
});

describe("diff against the working tree of a file ignored since the snapshot", () => {
  it("does not show it deleted while it is on disk (not captured is not deleted), as a restore leaves it; one gone from disk is", async () => {
    // Found in a trial: a new .gitignore line made diff print `D keep.tmp2` for a file still there.
    const r = repo({ "a.txt": "a\n", ".gitignore": "*.log\n" });
    r.write({ "keep.tmp2": "kept\n", "gone.tmp2": "gone\n" });
    const snap = await snapshotIn(r);
    r.write({ ".gitignore": "*.log\n*.tmp2\n" });
    r.remove("gone.tmp2");
    const live = r.ok("diff", snap.id);
    expect(live.map((e: { path: string; status: string }) => `${e.status} ${e.path}`)).toEqual([
      "modified .gitignore",
      "deleted gone.tmp2",
    ]);
    expect(r.cli(["diff", snap.id, "--name-status"]).stdout).toBe("M\t.gitignore\nD\tgone.tmp2\n");
    expect(r.cli(["diff", snap.id, "--", "keep.tmp2"]).stdout).toBe("no differences\n");
    expect(r.ok("restore", snap.id, "--dry-run").skipped).toEqual([
      expect.objectContaining({ path: "keep.tmp2", reason: "excluded" }),
    ]);
  });
});

describe("a directory named in dependencyDirs after the turn that wrote files in it", () => {
  it("is neither a conflict nor deleted by a rewind, as a .ghostignore line added since: its files are left and listed", async () => {
    const r = repo({ "README.md": "hi\n" });
    await turn(r, "s", "1", () => r.write({ "gen/a.txt": "gen v1\n" }));
    // The user now tells ghostcommit gen/ is generated, and edits the file by hand.
    r.write({ ".ghostcommit.json": '{"dependencyDirs": ["node_modules", "gen"]}\n' });
    r.write({ "gen/a.txt": "user's hand edit\n" });
    const done = r.cli(["rewind", "--to", "1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json.deleted).toEqual([]);
    expect(done.json.skipped).toEqual([{ path: "gen/a.txt", reason: "excluded" }]);
    expect(r.read("gen/a.txt")).toBe("user's hand edit\n");
  });
});

describe("a dependency directory some of whose untracked files a snapshot captured by --include", () => {
  it("counts as left out only the files it left out, and gives no count when it left none", async () => {
    const r = repo({ "dist/bundle.js": "v1\n" }); // a tracked, published bundle
    r.write({ "dist/chunk-1.js": "c1\n", "dist/chunk-2.js": "c2\n", "dist/chunk-3.js": "c3\n" });
    const one = r.ok("snapshot", "--include", "dist/chunk-1.js");
    expect(one.excluded).toEqual([{ path: "dist", reason: "dependency-dir", files: 2 }]);
    const all = ["dist/chunk-1.js", "dist/chunk-2.js", "dist/chunk-3.js"].flatMap((p) => ["--include", p]);
    // Still listed: a restore to it must not delete a chunk made there later (the snapshot would
    // not have captured it).
    expect(r.ok("snapshot", ...all).excluded).toEqual([{ path: "dist", reason: "dependency-dir" }]);
    r.write({ "dist/chunk-4.js": "c4\n" });
    const snaps = await listIn(r);
    r.ok("restore", snaps[0].id);
    expect(r.read("dist/chunk-4.js")).toBe("c4\n");
  });
});

describe("a file the repository came to ignore during the turn that changed it", () => {
  // An agent's shell regenerates out/a.txt and adds `out/` to .gitignore in the same turn: the
  // turn's after-snapshot cannot hold the file, so its state at the turn's end is unknown.
  it("makes the rewind refuse saying so, not that it was changed since; --force puts the turn's files back", async () => {
    const r = repo({ "README.md": "hi\n" });
    r.write({ "out/a.txt": "old\n", "log/run.log": "kept\n" });
    await turn(r, "s", "1", () => {
      r.write({ "out/a.txt": "new\n", ".gitignore": "out/\n" });
      r.remove("log/run.log");
    });
    // Made again by a person, who has the repository ignore it only now: a change since the turn.
    r.write({ "log/run.log": "a person's\n", "log/.gitignore": "*.log\n" });
    const refused = r.cli(["rewind", "--session", "s", "--to", "1", "--json"]);
    expect([refused.status, refused.json.conflicts, refused.json.ignoredAtEnd]).toEqual([
      3,
      ["log/run.log", "out/a.txt"],
      ["out/a.txt"],
    ]);
    expect(refused.json.error.message).toBe(
      "rewind refused: 1 file was changed since session s last changed it (log/run.log); " +
        "1 file was not captured at the end of the turn that changed it, as the repository ignored it then " +
        "(a rule the turn wrote, perhaps), so whether it was changed since is unknown (out/a.txt); nothing was changed; " +
        "`ghostcommit rewind --session s --to 1 -- PATH…` rewinds only the paths it names, --force overwrites",
    );
    expect([r.read("out/a.txt"), r.read("log/run.log")]).toEqual(["new\n", "a person's\n"]);

    const forced = r.ok("rewind", "--session", "s", "--to", "1", "--force");
    expect(forced.overridden).toEqual(["log/run.log", "out/a.txt"]);
    expect([r.read("out/a.txt"), r.read("log/run.log"), r.exists(".gitignore")]).toEqual([
      "old\n",
      "kept\n",
      false,
    ]);
  });
});

describe("ignore rules above a subdirectory's workspace, removed during a turn", () => {
  it("leave a file they kept out before the turn as it is: the turn did not make it", async () => {
    // The repository's `.gitignore` and `.ghostignore` are outside the tree of a workspace started
    // in src/: its before-snapshot records what they said.
    const r = repo({ ".gitignore": "*.log\n", ".ghostignore": "*.pem\n", "src/a.ts": "a1\n" });
    r.write({ "src/debug.log": "kept\n", "src/key.pem": "secret\n" });
    const src = new Repo(r.sandbox, path.join(r.dir, "src"));
    await turn(src, "s", "t1", () => {
      r.write({ ".gitignore": "", ".ghostignore": "", "src/a.ts": "a2\n", "src/made.ts": "m\n" });
    });
    const done = src.cli(["rewind", "--to", "t1", "--json"]);
    expect(done.status, done.stderr).toBe(0);
    expect(done.json.written).toEqual(["a.ts"]);
    expect(done.json.deleted).toEqual(["made.ts"]);
    expect([src.read("debug.log"), src.read("key.pem")]).toEqual(["kept\n", "secret\n"]);
  });
});
