import { appendFileSync, existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fileSandbox, filesOf, gitDirDigest } from "../helpers/support.js";
import type { Repo } from "../helpers/repo.js";
import { doctorIn } from "../helpers/in-process.js";

// On a large tree (from 20,000 index entries) the status that would make the private index copy
// reads the user's index instead, and a detached process makes the copy and builds git's
// untracked cache in it. These steps check that every snapshot stays right while that happens,
// and that the build really happens, on a repository of 20,000 tracked files.
const { sandbox, packedRepo } = fileSandbox();
const DEFERRED = "status reads the user's index; a detached process makes the private copy";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let r: Repo;
let store: string;
const claim = () => path.join(store, "status-index.building");
const copy = () => path.join(store, "status-index");

/** Waits for the detached build to let go of its claim. */
async function buildFinished(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (existsSync(claim())) {
    if (Date.now() > deadline) throw new Error("the detached status cache build did not finish");
    await sleep(50);
  }
}

/** A snapshot with the trace on: its JSON and whether its status read the user's index. */
function tracedSnapshot(): { snap: any; deferred: boolean; trace: string } {
  const result = r.sandbox.cli(r.dir, ["snapshot", "--json"], undefined, { GHOSTCOMMIT_TRACE: "1" });
  expect(result.status, result.stderr).toBe(0);
  return { snap: result.json, deferred: result.stderr.includes(DEFERRED), trace: result.stderr };
}

/** The copy carries git's untracked cache (extension "UNTR"), written by a status. */
function copyHasUntrackedCache(): boolean {
  return existsSync(copy()) && readFileSync(copy()).includes("UNTR");
}

beforeAll(async () => {
  writeFileSync(
    path.join(sandbox.env.XDG_CONFIG_HOME!, "ghostcommit", "config.json"),
    JSON.stringify({ watchman: false }),
  );
  const files: Record<string, string> = {};
  for (let d = 0; d < 200; d++) {
    for (let f = 0; f < 100; f++) files[`pkg${d}/file${f}.txt`] = `${d}/${f}\n`;
  }
  // Git's own detached auto gc would change the repository under the checks below: it is off.
  appendFileSync(sandbox.env.GIT_CONFIG_GLOBAL!, "[gc]\n\tauto = 0\n");
  r = packedRepo(files);
  store = (await doctorIn(r)).store as string;
}, 120_000);

afterAll(async () => {
  if (store) await buildFinished(); // the build must not outlive the sandbox
});

describe("the private index copy of a large tree is built by a detached process", () => {
  test("the first snapshot reads the user's index, the copy is built after it, and later snapshots use it", async () => {
    const gitBefore = gitDirDigest(r);
    r.write({ "pkg0/file0.txt": "edited\n", "fresh/a.txt": "a\n", "pkg1/new.txt": "n\n" });
    const first = tracedSnapshot();
    expect(first.deferred).toBe(true);
    const firstFiles = await filesOf(r, first.snap.id);
    expect(firstFiles).toHaveLength(20_002);
    expect(firstFiles).toEqual(expect.arrayContaining(["fresh/a.txt", "pkg1/new.txt"]));

    await buildFinished();
    expect(copyHasUntrackedCache()).toBe(true);
    expect(readFileSync(path.join(store, "ghostcommit.log"), "utf8")).not.toMatch(/failed/);

    // Files appearing inside a directory the cache now holds, and inside a new one.
    r.write({ "fresh/b.txt": "b\n", "fresh/deeper/c.txt": "c\n", "pkg2/other.txt": "o\n" });
    r.remove("pkg1/new.txt");
    const second = tracedSnapshot();
    expect(second.deferred).toBe(false);
    const secondFiles = await filesOf(r, second.snap.id);
    expect(secondFiles).toEqual(
      expect.arrayContaining(["fresh/a.txt", "fresh/b.txt", "fresh/deeper/c.txt", "pkg2/other.txt"]),
    );
    expect(secondFiles).not.toContain("pkg1/new.txt");
    expect(secondFiles).toHaveLength(20_004);
    expect(gitDirDigest(r)).toEqual(gitBefore); // the user's repository is never written
  }, 120_000);

  test("after the user's index changes, the next snapshot reads it again while the copy is rebuilt", async () => {
    r.git("add", "fresh");
    r.git("commit", "-q", "-m", "fresh files");
    r.write({ "fresh/after-commit.txt": "x\n", "pkg3/file3.txt": "changed\n" });
    const snap = tracedSnapshot();
    expect(snap.deferred).toBe(true);
    const files = await filesOf(r, snap.snap.id);
    expect(files).toEqual(
      expect.arrayContaining(["fresh/after-commit.txt", "fresh/deeper/c.txt", "pkg2/other.txt"]),
    );
    expect(snap.snap.parent).toBe(r.git("rev-parse", "HEAD").trim());
    await buildFinished();
    expect(copyHasUntrackedCache()).toBe(true);
    const next = tracedSnapshot();
    expect(next.deferred).toBe(false);
    expect(await filesOf(r, next.snap.id)).toEqual(files);
  }, 120_000);

  test("a build in progress is not started twice; a claim left by a killed build is taken over", async () => {
    r.git("add", "-A");
    r.git("commit", "-q", "-m", "everything");
    // A live claim: snapshots read the user's index and start nothing.
    writeFileSync(claim(), "");
    r.write({ "pkg4/during.txt": "d\n" });
    const during = tracedSnapshot();
    expect(during.deferred).toBe(true);
    expect(await filesOf(r, during.snap.id)).toContain("pkg4/during.txt");
    await sleep(500);
    expect(existsSync(claim())).toBe(true); // still ours: no build took it over
    const stale = new Date(Date.now() - 10 * 60_000);
    utimesSync(claim(), stale, stale);
    const after = tracedSnapshot();
    expect(after.deferred).toBe(true);
    await buildFinished();
    expect(copyHasUntrackedCache()).toBe(true);
    r.write({ "pkg4/later.txt": "l\n" });
    const later = tracedSnapshot();
    expect(later.deferred).toBe(false);
    expect(await filesOf(r, later.snap.id)).toEqual(
      expect.arrayContaining(["pkg4/during.txt", "pkg4/later.txt"]),
    );
  }, 120_000);

  test("where a conversion appears, the proof of the user's index is made beside the status reading it", async () => {
    await buildFinished();
    // CRLF on disk, LF in the blob: git calls it clean, and only its size gives it away.
    r.write({ ".gitattributes": "* text=auto eol=lf\n", "pkg5/crlf.txt": "one\r\ntwo\r\n" });
    r.git("add", "-A");
    r.git("commit", "-q", "-m", "attributes");
    const past = new Date(Date.now() - 60_000);
    utimesSync(r.path("pkg5/crlf.txt"), past, past);
    r.git("update-index", "-q", "--refresh");
    expect(r.git("cat-file", "-s", "HEAD:pkg5/crlf.txt").trim()).toBe("8");
    expect(r.status()).toBe("");
    const snap = tracedSnapshot();
    expect(snap.deferred).toBe(true);
    expect(snap.trace).toContain("capture: clean proof started beside status");
    expect(snap.trace.split("clean proof made from the whole index").length).toBe(2); // made once
    expect(snap.trace).toContain("capture: 1 tracked files to verify");
    r.write({ "pkg5/crlf.txt": "agent\n" });
    r.ok("restore", snap.snap.id);
    expect(readFileSync(r.path("pkg5/crlf.txt"), "latin1")).toBe("one\r\ntwo\r\n");
  }, 120_000);
});
