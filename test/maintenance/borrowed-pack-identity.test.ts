import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Repo } from "../helpers/repo.js";
import { fileSandbox } from "../helpers/support.js";
import { snapshotIn, turn } from "../session/support.js";

/**
 * The shadow store borrows your packs by hard link. Your `git gc` on unchanged content writes a
 * new file under the same pack name (git names a pack after its checksum): the store must judge
 * its links by the file, or it keeps the old file as a private copy of your whole repository,
 * which its size cap can never free.
 */

const { sandbox, repo: makeRepo } = fileSandbox();

/** The store of `r`: the workspace directory whose workspace.json names it. */
function storePackDir(r: Repo): string {
  const workspaces = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
  const key = readdirSync(workspaces).find((k) =>
    readFileSync(path.join(workspaces, k, "workspace.json"), "utf8").includes(JSON.stringify(r.dir)),
  );
  return path.join(workspaces, key!, "git", "objects", "pack");
}

/** Bytes of the store's pack files that are not links to your repository's (link count 1). */
function privatePackBytes(r: Repo): number {
  const dir = storePackDir(r);
  return readdirSync(dir)
    .map((name) => statSync(path.join(dir, name)))
    .filter((s) => s.isFile() && s.nlink === 1)
    .reduce((sum, s) => sum + s.size, 0);
}

function restoresAll(r: Repo, expected: Map<string, string>): void {
  for (const [id, content] of expected) {
    r.ok("restore", id);
    expect(r.read("a.txt")).toBe(content);
  }
}

describe("packs your git rewrites under the same name", () => {
  it("are linked again: no private copy stays, the cap drops nothing, and every snapshot restores", async () => {
    const r = makeRepo({ "a.txt": "a\n" });
    r.write({ "big.bin": randomBytes(3_000_000) });
    r.git("add", "-A");
    r.git("commit", "-qm", "big");
    r.git("gc", "-q");
    const snapshots = new Map<string, string>();
    snapshots.set(r.ok("snapshot", "-m", "one").id, "a\n");
    r.ok("gc");
    // Your git gc again, nothing new: same pack name, another file.
    r.git("gc", "-q");
    r.write({ "a.txt": "a2\n" });
    snapshots.set(r.ok("snapshot", "-m", "two").id, "a2\n");
    expect(privatePackBytes(r)).toBeLessThan(100_000);
    r.ok("gc");
    expect(privatePackBytes(r)).toBeLessThan(100_000);
    // More snapshots for the cap to weigh, taken in-process (the store's links are made above).
    for (let i = 1; i <= 5; i++) {
      r.write({ "a.txt": `v${i}\n` });
      snapshots.set((await snapshotIn(r, { message: `s${i}` })).id, `v${i}\n`);
    }
    // A cap the 3 MB copy alone would exceed (as the 2 GiB default with a larger repository).
    r.write({ ".ghostcommit.json": '{"maxStoreBytes": 2000000}\n' });
    const report = r.ok("gc");
    expect(report.dropped).toEqual([]);
    expect(report.kept).toHaveLength(7);
    expect(report.bytesAfter).toBeLessThan(2_000_000);
    expect(r.cli(["doctor", "--json"]).json.problems).toEqual([]);
    // Your git repacks and prunes everything again, then ghostcommit's gc: every snapshot restores.
    r.git("repack", "-adq");
    r.git("gc", "-q", "--prune=now");
    r.ok("gc");
    r.git("gc", "-q", "--prune=now");
    restoresAll(r, snapshots);
  });
});

describe("the size cap", () => {
  it("drops no snapshot whose drop would free nothing, and says why the store stays over", async () => {
    const r = makeRepo({ "a.txt": "a\n" });
    // Content only the store holds (untracked), the same in every snapshot (taken in-process).
    r.write({ "data.bin": randomBytes(1_500_000) });
    const ids: string[] = [];
    for (const i of [1, 2, 3, 4]) ids.push((await snapshotIn(r, { message: `s${i}` })).id);
    // The newest turn of an active session is protected; it holds the same content.
    await turn(r, "s", "1", () => {}, "p");
    r.write({ ".ghostcommit.json": '{"maxStoreBytes": 500000}\n' });
    const report = r.ok("gc");
    expect(report.dropped).toEqual([]);
    expect(report.kept).toEqual(expect.arrayContaining(ids));
    expect(report.overCap).toEqual({ maxBytes: 500000, unprotectedLeft: 4 });
    const human = r.cli(["gc"]);
    expect(human.status).toBe(0);
    expect(human.stdout).toContain(
      "store stays over its cap (maxStoreBytes 488 KiB): dropping the 4 unprotected snapshots left would free nothing, so they were kept",
    );
    const doctor = r.cli(["doctor", "--json"]).json;
    expect(doctor.problems.map((p: { code: string }) => p.code)).toEqual(["store-over-cap"]);
  });
});

describe("packs your git deletes after writing their objects into a new pack", () => {
  it("are freed by the next snapshot, and every snapshot restores after your prune", () => {
    const r = makeRepo({ "a.txt": "a\n" });
    r.write({ "big.bin": randomBytes(2_000_000) });
    r.git("add", "-A");
    r.git("commit", "-qm", "big");
    r.git("gc", "-q");
    const snapshots = new Map<string, string>();
    for (let i = 1; i <= 3; i++) {
      r.write({ "a.txt": `work ${i}\n` });
      snapshots.set(r.ok("snapshot", "-m", `s${i}`).id, `work ${i}\n`);
      // Your commit and git gc: a new pack, the old one deleted.
      r.git("add", "-A");
      r.git("commit", "-qm", `c${i}`);
      r.git("gc", "-q");
    }
    expect(privatePackBytes(r)).toBeGreaterThan(2_000_000); // the last one, until the next capture
    r.write({ "a.txt": "last\n" });
    snapshots.set(r.ok("snapshot", "-m", "last").id, "last\n");
    expect(privatePackBytes(r)).toBeLessThan(100_000);
    r.git("gc", "-q", "--prune=now");
    restoresAll(r, snapshots);
  });

  it("are kept while they hold objects your repository no longer has", () => {
    const r = makeRepo({ "a.txt": "a\n" });
    r.git("checkout", "-qb", "feature");
    const only = randomBytes(500_000);
    r.write({ "feat.bin": only, "a.txt": "on feature\n" });
    r.git("add", "-A");
    r.git("commit", "-qm", "feature");
    r.git("gc", "-q");
    const snap = r.ok("snapshot", "-m", "on feature").id;
    r.git("checkout", "-q", "main");
    r.git("branch", "-qD", "feature");
    r.git("reflog", "expire", "--expire=now", "--all");
    r.git("gc", "-q", "--prune=now");
    r.write({ "a.txt": "next\n" });
    r.ok("snapshot", "-m", "after your prune");
    expect(privatePackBytes(r)).toBeGreaterThan(500_000);
    r.ok("restore", snap);
    expect(r.read("a.txt")).toBe("on feature\n");
    expect(Buffer.compare(readFileSync(r.path("feat.bin")), only)).toBe(0);
    r.ok("gc");
    r.remove("feat.bin");
    r.ok("restore", snap);
    expect(Buffer.compare(readFileSync(r.path("feat.bin")), only)).toBe(0);
  });
});
