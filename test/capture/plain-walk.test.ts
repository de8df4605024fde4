import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileSandbox } from "../helpers/support.js";

const { sandbox } = fileSandbox();

/** A file of `folder` written, its directories made. */
function writeIn(folder: string, rel: string, content: string): void {
  mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
  writeFileSync(path.join(folder, rel), content);
}

/**
 * A traced snapshot of `folder` in the data directory `home`: the command's result, its store,
 * and every entry of its tree with mode and id (submodule-like entries included), to compare two
 * stores.
 */
function snapshotOf(folder: string, home: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const result = sandbox.cli(folder, ["snapshot", "--json", ...args], undefined, {
    GHOSTCOMMIT_HOME: home,
    GHOSTCOMMIT_TRACE: "1",
    ...env,
  });
  expect(result.status, result.stderr).toBe(0);
  const [workspace] = readdirSync(path.join(home, "workspaces"));
  const store = path.join(home, "workspaces", workspace);
  const tree = execFileSync(
    "git",
    ["--git-dir", path.join(store, "git"), "ls-tree", "-r", "-z", result.json.id],
    {
      env: sandbox.env,
      encoding: "latin1",
    },
  ).split("\0");
  return { result, store, tree };
}

/**
 * A later snapshot of a plain directory walks it once: git reports each directory holding no
 * captured file as "dir/", and ghostcommit lists the new ones itself. The oracle is the first
 * snapshot of the same directory in a new store, where git lists every file: both must name the
 * same tree and set aside the same paths.
 */
describe("a later snapshot of a plain directory", () => {
  const folder = sandbox.dir("plain-walk");
  const write = (rel: string, content: string) => writeIn(folder, rel, content);
  const dataDirs = { first: path.join(sandbox.home, "data-a"), oracle: path.join(sandbox.home, "data-b") };
  const snapshot = (home: string) => {
    const { result, tree } = snapshotOf(folder, home);
    // Walks of the folder by git (a nested repository's own walk applies its ignore rules).
    const walks = result.stderr
      .split("\n")
      .filter((line) => /git ls-files -z --others/.test(line) && !/--exclude-standard/.test(line)).length;
    const statuses = result.stderr.split("\n").filter((line) => /capture: plain status/.test(line)).length;
    const excluded = (result.json.excluded as { path: string; reason: string }[])
      .map((e) => `${e.reason} ${e.path}`)
      .sort();
    return { id: result.json.id as string, tree, walks, statuses, excluded };
  };

  it("captures what a first snapshot would: new directories, their dependency dirs, repositories, links and kind changes", () => {
    write("a.txt", "a\n");
    write("src/m.js", "m\n");
    write("src/deep/x.txt", "x\n");
    write("node_modules/dep/i.js", "i\n");
    write("gone/f.txt", "f\n");
    write("will-be-dir", "file for now\n");
    write("will-be-file/g.txt", "g\n");
    const first = snapshot(dataDirs.first);
    expect(first.walks).toBe(2); // everything is new: every file listed, dependency dirs apart

    write("a.txt", "a changed\n");
    rmSync(path.join(folder, "gone"), { recursive: true });
    // A new directory, several levels deep, with what each rule applies to.
    write("new/one.txt", "1\n");
    write("new/sub/two.txt", "2\n");
    write("new/sub/.gitignore", "*.txt\n"); // a plain directory's .gitignore excludes nothing
    write("new/node_modules/p/q.js", "q\n");
    write("new/lib/node_modules/r/s.js", "s\n");
    mkdirSync(path.join(folder, "new/empty/deeper"), { recursive: true });
    symlinkSync("one.txt", path.join(folder, "new/link"));
    symlinkSync("../src", path.join(folder, "new/dirlink")); // a link, never followed
    execFileSync("mkfifo", [path.join(folder, "new/fifo")]);
    const latin1Dir = Buffer.from(`${folder}/new/caf\xe9`, "latin1"); // a name that is not UTF-8
    mkdirSync(latin1Dir);
    writeFileSync(Buffer.concat([latin1Dir, Buffer.from("/z.txt")]), "z\n");
    write("new/repo/inner.txt", "inner\n");
    sandbox.git(path.join(folder, "new/repo"), "init", "-q");
    // A new directory below one already captured, and kinds that changed.
    write("src/newsub/n.txt", "n\n");
    unlinkSync(path.join(folder, "will-be-dir"));
    write("will-be-dir/inner.txt", "now a dir\n");
    rmSync(path.join(folder, "will-be-file"), { recursive: true });
    write("will-be-file", "now a file\n");
    // A captured directory that became a repository.
    sandbox.git(path.join(folder, "src/deep"), "init", "-q");

    const later = snapshot(dataDirs.first);
    // Status lists it: "new/" is listed here, its .gitignore never read by git.
    expect([later.statuses, later.walks]).toEqual([1, 0]);
    const oracle = snapshot(dataDirs.oracle);
    expect(oracle.walks).toBe(2);
    expect(later.excluded).toEqual(oracle.excluded);
    expect(later.excluded).toEqual(
      expect.arrayContaining([
        "dependency-dir new/lib/node_modules",
        "dependency-dir new/node_modules",
        "dependency-dir node_modules",
      ]),
    );
    expect(later.tree).toEqual(oracle.tree);
    const shown = sandbox.cli(folder, ["show", later.id, "--json"], undefined, {
      GHOSTCOMMIT_HOME: dataDirs.first,
    });
    const files = shown.json.files as string[];
    expect(files).toEqual(
      expect.arrayContaining([
        "a.txt",
        "new/one.txt",
        "new/sub/two.txt",
        "new/sub/.gitignore",
        "new/link",
        "new/dirlink",
        "new/caf\ufffd/z.txt",
        "new/repo/inner.txt",
        "src/deep/x.txt",
        "src/newsub/n.txt",
        "will-be-dir/inner.txt",
        "will-be-file",
      ]),
    );
    const unwanted = (f: string) =>
      f.startsWith("gone/") || f.startsWith("new/empty") || f === "new/fifo" || f.includes("node_modules");
    expect(files.filter(unwanted)).toEqual([]);
  });
});

/**
 * A later snapshot with few changes leaves the store's index as it is: the files changed since
 * it was written are read again and the tree is the index's tree edited along them. The oracle
 * again is a first snapshot of the same folder in a new store.
 */
describe("a later snapshot of a plain directory, its index left as it is", () => {
  const folder = sandbox.dir("plain-deferred");
  const write = (rel: string, content: string) => writeIn(folder, rel, content);
  const home = path.join(sandbox.home, "data-deferred");
  let oracles = 0;
  const snapshot = (dataHome: string, args: string[] = []) => {
    const { result, store, tree } = snapshotOf(folder, dataHome, args);
    return {
      tree,
      fileCount: result.json.fileCount as number,
      deferred: result.stderr.includes("capture: plain index left as it is"),
      // What the index holds (status rewrites its stat data and untracked cache, never this).
      index: execFileSync("git", ["--git-dir", path.join(store, "git"), "ls-files", "-s", "-z"], {
        env: { ...sandbox.env, GIT_INDEX_FILE: path.join(store, "plain-index") },
        encoding: "latin1",
      }),
    };
  };
  const matchesOracle = (later: ReturnType<typeof snapshot>) => {
    const oracle = snapshot(path.join(sandbox.home, `data-oracle-${++oracles}`));
    expect(later.tree).toEqual(oracle.tree);
    expect(later.fileCount).toBe(oracle.fileCount);
  };

  it("captures every change without rewriting the index, and rewrites it once many paths are outstanding", () => {
    for (let i = 0; i < 20; i++) write(`src/f${i}.txt`, `${i}\n`);
    write("kept.txt", "kept\n");
    write("becomes-dir", "a file for now\n");
    write("old/dir/g.txt", "g\n");
    const first = snapshot(home);
    expect(first.deferred).toBe(false);

    write("src/f1.txt", "one, edited\n");
    write("src/new/n.txt", "new\n");
    write("top-new.txt", "top\n");
    rmSync(path.join(folder, "src/f2.txt"));
    const second = snapshot(home);
    expect(second.deferred).toBe(true);
    expect(second.index).toBe(first.index); // not written
    matchesOracle(second);

    // Still measured against the index of the first snapshot: an edit undone, kinds swapped.
    write("src/f1.txt", "1\n");
    unlinkSync(path.join(folder, "becomes-dir"));
    write("becomes-dir/inner.txt", "now a dir\n");
    rmSync(path.join(folder, "old"), { recursive: true });
    write("old", "now a file\n");
    symlinkSync("kept.txt", path.join(folder, "link"));
    rmSync(path.join(folder, "top-new.txt"));
    const third = snapshot(home);
    expect(third.deferred).toBe(true);
    expect(third.index).toBe(first.index);
    matchesOracle(third);

    // Touched paths the index cannot vouch for: a deleted directory (looked up in the index's
    // tree) and a file that was never captured.
    rmSync(path.join(folder, "src/new"), { recursive: true });
    write("touched.txt", "touched\n");
    const touched = snapshot(home, ["--include", "src/new", "--include", "touched.txt"]);
    expect(touched.deferred).toBe(true);
    expect(touched.index).toBe(first.index);
    matchesOracle(touched);

    for (let i = 0; i < 450; i++) write(`bulk/b${i}.txt`, `${i}\n`);
    const fourth = snapshot(home);
    expect(fourth.deferred).toBe(false);
    expect(fourth.index).not.toBe(first.index); // written: 450 paths were outstanding
    matchesOracle(fourth);

    write("bulk/b7.txt", "seven, edited\n");
    const fifth = snapshot(home);
    expect(fifth.deferred).toBe(true);
    expect(fifth.index).toBe(fourth.index);
    matchesOracle(fifth);

    // The index's tree gone from a damaged store: the snapshot writes the index instead.
    const [workspace] = readdirSync(path.join(home, "workspaces"));
    const store = path.join(home, "workspaces", workspace);
    const { indexTree } = JSON.parse(readFileSync(path.join(store, "plain-state.json"), "utf8"));
    rmSync(path.join(store, "git/objects", indexTree.slice(0, 2), indexTree.slice(2)));
    rmSync(path.join(store, "object-cache.bin"), { force: true });
    write("bulk/b8.txt", "eight, edited\n");
    const sixth = snapshot(home);
    expect(sixth.deferred).toBe(false);
    expect(sixth.index).not.toBe(fifth.index);
    matchesOracle(sixth);
  });
});

/**
 * A later snapshot asks status, whose untracked cache keeps directories unchanged since the last
 * snapshot from being read again; status applies ignore rules, which a plain directory's
 * snapshot must not. The oracle is a first snapshot of the same folder in a new store.
 */
describe("a later snapshot of a plain directory through status", () => {
  const folder = sandbox.dir("plain-status");
  const write = (rel: string, content: string) => writeIn(folder, rel, content);
  const home = path.join(sandbox.home, "data-status");
  // A user whose global ignore file names what the folder holds.
  const globalConfig = path.join(sandbox.home, "plain-status.gitconfig");
  const globalIgnore = path.join(sandbox.home, "plain-status.ignore");
  writeFileSync(globalIgnore, "*.log\nbuild-output/\n");
  writeFileSync(globalConfig, `[core]\n\texcludesFile = ${globalIgnore}\n`);
  let oracles = 0;
  const snapshot = (dataHome: string, dir = folder) => {
    const { result, tree } = snapshotOf(dir, dataHome, [], { GIT_CONFIG_GLOBAL: globalConfig });
    const lines = result.stderr.split("\n");
    return {
      tree,
      excluded: (result.json.excluded as { path: string; reason: string }[])
        .map((e) => `${e.reason} ${e.path}`)
        .sort(),
      files: (
        sandbox.cli(dir, ["show", result.json.id, "--json"], undefined, { GHOSTCOMMIT_HOME: dataHome }).json
          .files as string[]
      ).sort(),
      statuses: lines.filter((line) => /capture: plain status/.test(line)).length,
      ignoreFileSeen: lines.some((line) => /capture: plain status, a .gitignore seen/.test(line)),
      // A status that did not write git's cache told of a changed ignore file, so one that does ran.
      askedAgain: lines.some((line) => /capture: status asked again/.test(line)),
      walks: lines.filter((line) => /git ls-files -z --others/.test(line)).length,
    };
  };
  const expectOracle = (later: ReturnType<typeof snapshot>, dir = folder) => {
    const oracle = snapshot(path.join(sandbox.home, `data-status-oracle-${++oracles}`), dir);
    expect(later.tree).toEqual(oracle.tree);
    expect(later.excluded).toEqual(oracle.excluded);
  };

  it("captures what its ignore rules would hide, and walks the folder while a .gitignore is in it", () => {
    write("src/a.txt", "a\n");
    write("docs/b.md", "b\n");
    write("notes/n.txt", "n\n");
    snapshot(home);

    // Names the user's global ignore file lists, in a directory status reads again.
    write("src/debug.log", "log\n");
    write("src/build-output/out.js", "out\n");
    write("docs/b.md", "b, edited\n");
    const second = snapshot(home);
    expect([second.statuses, second.walks, second.ignoreFileSeen]).toEqual([1, 0, false]);
    expect(second.files).toEqual(
      expect.arrayContaining(["src/debug.log", "src/build-output/out.js", "docs/b.md"]),
    );
    expectOracle(second);

    // A .gitignore that ignores itself and everything beside it, in a directory already captured.
    write("src/.gitignore", "*\n");
    write("notes/.gitignore", "*.bak\n");
    write("src/hidden.txt", "hidden from status\n");
    write("src/deeper/x.txt", "x\n");
    const third = snapshot(home);
    expect([third.statuses, third.walks, third.ignoreFileSeen]).toEqual([1, 1, true]);
    expect([second.askedAgain, third.askedAgain]).toEqual([false, true]);
    expect(third.files).toEqual(
      expect.arrayContaining(["src/.gitignore", "src/hidden.txt", "src/deeper/x.txt", "src/a.txt"]),
    );
    expectOracle(third);

    // Remembered: the folder is walked without asking status first.
    write("docs/c.md", "c\n");
    write("src/deeper/y.txt", "y\n");
    const fourth = snapshot(home);
    expect([fourth.statuses, fourth.walks]).toEqual([0, 1]);
    expect(fourth.files).toEqual(expect.arrayContaining(["docs/c.md", "src/deeper/y.txt"]));
    expectOracle(fourth);

    // Gone, and the index written again (many paths outstanding): status is asked again.
    rmSync(path.join(folder, "src/.gitignore"));
    rmSync(path.join(folder, "notes/.gitignore")); // in a directory that holds captured files only
    for (let i = 0; i < 450; i++) write(`bulk/b${i}.txt`, `${i}\n`);
    const fifth = snapshot(home);
    expect([fifth.statuses, fifth.walks]).toEqual([0, 1]);
    expectOracle(fifth);
    // Git keeps its record of notes/.gitignore (nothing there to check against it): the cache was
    // dropped when the index was written, and status made it again.
    write("bulk/b1.txt", "one, edited\n");
    write("docs/z.log", "z\n");
    const sixth = snapshot(home);
    expect([sixth.statuses, sixth.walks, sixth.ignoreFileSeen]).toEqual([1, 0, false]);
    expect(sixth.files).toEqual(expect.arrayContaining(["bulk/b1.txt", "docs/z.log"]));
    expect(sixth.files).not.toContain("src/.gitignore");
    expectOracle(sixth);
  });

  it("trusts status beside a dependency directory whose own .gitignore hides all of it", () => {
    const project = sandbox.dir("plain-status-venv");
    const put = (rel: string, content: string) => writeIn(project, rel, content);
    const dataHome = path.join(sandbox.home, "data-status-venv");
    put("app.py", "print(1)\n");
    put("lib/util.py", "x = 1\n");
    // As `python -m venv` and pytest write them: everything below ignored, the file itself too.
    put(".venv/.gitignore", "*\n");
    put(".venv/bin/python", "#!/bin/sh\n");
    put("lib/.pytest_cache/.gitignore", "# created by pytest automatically, do not change\n*\n");
    put("lib/.pytest_cache/v/cache/nodeids", "[]\n");
    snapshot(dataHome, project);

    put("app.py", "print(2)\n");
    put("lib/new.py", "y = 2\n");
    put(".venv/lib/site.py", "site\n");
    const later = snapshot(dataHome, project);
    expect([later.statuses, later.walks, later.ignoreFileSeen]).toEqual([1, 0, false]);
    expect(later.excluded).toEqual(["dependency-dir .venv", "dependency-dir lib/.pytest_cache"]);
    expect(later.files).toEqual(["app.py", "lib/new.py", "lib/util.py"]);
    expectOracle(later, project);
  });
});
