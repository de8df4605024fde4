import { spawnSync } from "node:child_process";
import { statSync, unlinkSync, utimesSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";
import { lineOf, runCliTraced, startedAt } from "../helpers/short-lived.js";
import { doctorIn } from "../helpers/in-process.js";

/**
 * The shadow store hard-links your loose objects into itself, so a snapshot that borrows them
 * survives your `git gc --prune=now`: when the links are made, and that none is missed.
 */

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

describe("a snapshot links what it borrows from your repository while its status runs", () => {
  it("the links of your loose objects are made before the capture writes its first object", () => {
    // A young repository: its commit's objects are loose, and a new store has linked none.
    const workspace = sandbox.repo("links-ahead", { "a.txt": "1\n", "src/b.txt": "2\n" });
    workspace.write({ "a.txt": "changed\n" });
    const result = runCliTraced(
      sandbox,
      "links-ahead-trace",
      workspace.dir,
      "execve,link,linkat,rename,clone,clone3,fork,vfork",
      ["snapshot", "--json"],
    );
    expect(result.status).toBe(0);
    const { lines } = result;
    const status = startedAt(lines, /execve\("[^"]*\/git", \["git", .*"status".* = 0$/);
    const linked = lineOf(lines, /link(at)?\(.*\.git\/objects\/[0-9a-f]{2}\/[0-9a-f]{38}".* = 0$/);
    const afterStatus = lines.slice(status + 1);
    const written = afterStatus.findIndex((line) =>
      /rename\(".*\/objects\/(pack\/tmp_pack|[0-9a-f]{2}\/tmp_obj)/.test(line),
    );
    expect(status).toBeGreaterThanOrEqual(0);
    expect(linked).toBeGreaterThan(status);
    expect(written).toBeGreaterThanOrEqual(0);
    expect(linked).toBeLessThan(status + 1 + written);
    // And the snapshot stands on them: its files are listed from the store.
    const snap = JSON.parse(result.stdout);
    expect(workspace.ok("show", snap.id).files.sort()).toEqual(["a.txt", "src/b.txt"]);
  });

  it("an object git adds to a directory within its clock tick of the last listing is linked all the same", () => {
    const r = sandbox.repo("links-racy", { "a.txt": "first\n" });
    const fanOf = (oid: string) => path.join(r.dir, ".git", "objects", oid.slice(0, 2));
    const fan = fanOf(r.git("rev-parse", "HEAD:a.txt").trim());
    // A time the next listing cannot see move, as when git adds an object within the kernel's
    // clock tick (milliseconds) of a listing: a directory's time then stays as it was listed.
    const tick = new Date(Date.now() + 60_000);
    utimesSync(fan, tick, tick);
    r.ok("snapshot", "-m", "lists the directory");
    // A staged file whose blob lands in that directory.
    let content = "";
    for (let n = 0; ; n++) {
      content = `shares a directory ${n}\n`;
      r.write({ "b.txt": content });
      if (fanOf(r.git("hash-object", "b.txt").trim()) === fan) break;
    }
    r.git("add", "b.txt");
    const blob = r.git("rev-parse", ":b.txt").trim();
    expect(statSync(fan).mtimeMs).not.toBe(tick.getTime());
    utimesSync(fan, tick, tick);
    const snap = r.ok("snapshot", "-m", "borrows the staged blob");
    // Your git forgets the blob: unstaged, then pruned.
    r.git("rm", "-q", "--cached", "b.txt");
    r.git("gc", "-q", "--prune=now");
    expect(spawnSync("git", ["cat-file", "-e", blob], { cwd: r.dir, env: sandbox.env }).status).not.toBe(0);
    unlinkSync(r.path("b.txt"));
    r.ok("restore", snap.id);
    expect(r.read("b.txt")).toBe(content);
  });

  it("a snapshot stays restorable when ghostcommit's gc runs between your git gc and your next prune", async () => {
    const r = sandbox.repo("links-after-gc", { "a.txt": "base\n" });
    r.git("checkout", "-qb", "feature");
    r.write({ "f.txt": "only on the feature branch\n" });
    r.git("add", "f.txt");
    r.git("commit", "-qm", "feature");
    const snap = r.ok("snapshot", "-m", "on feature");
    r.git("checkout", "-q", "main");
    // Your git packs the feature's objects; ghostcommit's gc runs before any other snapshot.
    r.git("gc", "-q");
    r.ok("gc");
    // Then the branch goes, and your git prunes what only it held.
    r.git("branch", "-qD", "feature");
    r.git("reflog", "expire", "--expire=now", "--all");
    r.git("gc", "-q", "--prune=now");
    expect(
      spawnSync("git", ["rev-parse", "-q", "--verify", "feature"], { cwd: r.dir, env: sandbox.env }).status,
    ).not.toBe(0);
    r.ok("restore", snap.id);
    expect(r.read("f.txt")).toBe("only on the feature branch\n");
    expect((await doctorIn(r)).ok).toBe(true);
  });
});
