import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cloneOf, machines, originRepo } from "./remote-support.js";

const { a, b, bare } = machines();

describe("a fetch of one workspace's sessions", () => {
  it("names the folders whose sessions the remote holds: each workspace path has its own namespace there", () => {
    const remote = bare("elsewhere.git");
    const repo = originRepo(a, "elsewhere-a", remote, {
      "README.md": "hi\n",
      "packages/app/index.ts": "1\n",
    });
    // A session in a subdirectory (the agent was started there), and one in a folder HEAD lacks.
    const app = repo.path("packages/app");
    a.ok(app, "turn", "begin", "--session", "s-app", "--turn", "1");
    writeFileSync(`${app}/index.ts`, "2\n");
    a.ok(app, "turn", "end", "--session", "s-app");
    expect(a.ok(app, "push").sessions.map((s: any) => s.session)).toEqual(["s-app"]);
    const scratch = repo.path("scratch");
    mkdirSync(scratch);
    a.ok(scratch, "turn", "begin", "--session", "s-scratch", "--turn", "1");
    writeFileSync(`${scratch}/notes.txt`, "n\n");
    a.ok(scratch, "turn", "end", "--session", "s-scratch");
    a.ok(scratch, "push");
    // Another machine's clone, at the repository's root, where the remote holds none of its own.
    const onB = cloneOf(b, remote, "elsewhere-b");
    const atRoot = onB.ok("fetch");
    expect([atRoot.sessions, atRoot.snapshots]).toEqual([[], []]);
    expect(atRoot.elsewhere).toEqual([
      { folder: "packages/app", sessions: 1, of: "repository" },
      { folder: null, sessions: 1, of: "repository" },
    ]);
    const said = b.cli(onB.dir, ["fetch"]);
    expect(said.status, said.stderr).toBe(0);
    expect(said.stdout).toContain(
      "the remote holds sessions of other workspaces, which a fetch there brings:\n  packages/app  1 session\n  1 session of folders this repository's HEAD does not hold\n",
    );
    // Once the root has sessions of its own there, the others are still named.
    a.ok(repo.dir, "turn", "begin", "--session", "s-root", "--turn", "1");
    repo.write({ "README.md": "hello\n" });
    a.ok(repo.dir, "turn", "end", "--session", "s-root");
    a.ok(repo.dir, "push");
    const both = b.cli(onB.dir, ["fetch"]);
    expect(both.stdout).toContain(
      "the remote also holds sessions of other workspaces, which a fetch there brings:",
    );
    // In the folder, its session comes, and the root's is named instead.
    const inApp = b.ok(onB.path("packages/app"), "fetch");
    expect(inApp.sessions.map((s: any) => s.session)).toEqual(["s-app"]);
    expect(inApp.elsewhere).toEqual([
      { folder: ".", sessions: 1, of: "repository" },
      { folder: null, sessions: 1, of: "repository" },
    ]);
    // A plain directory fetching from that remote: the sessions are a repository's, not its kind's
    // (found in a trial: it was told of "folders this repository's HEAD does not hold").
    const plainDir = path.join(b.home, "elsewhere-plain");
    mkdirSync(plainDir);
    writeFileSync(`${plainDir}/notes.txt`, "n\n");
    const fromPlain = b.cli(plainDir, ["fetch", remote]);
    expect(fromPlain.status, fromPlain.stderr).toBe(0);
    expect(fromPlain.stdout).toContain(
      "the remote holds sessions of other workspaces, which a fetch there brings:\n  3 sessions of a repository (its root or folders: a fetch in a clone of it brings them)\n",
    );
    // And a repository's fetch names a plain directory's sessions as such.
    b.ok(plainDir, "turn", "begin", "--session", "s-plain", "--turn", "1");
    writeFileSync(`${plainDir}/notes.txt`, "m\n");
    b.ok(plainDir, "turn", "end", "--session", "s-plain");
    b.ok(plainDir, "push", remote);
    const afterPlain = b.ok(onB.dir, "fetch");
    expect(afterPlain.elsewhere).toContainEqual({ folder: null, sessions: 1, of: "plain" });
    expect(b.cli(onB.dir, ["fetch"]).stdout).toContain("  1 session of a plain directory\n");
  });
});
