import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, Repo } from "../helpers/repo.js";
import {
  cliTurn,
  cloneOf,
  ghostRefs,
  gitDaemon,
  hook,
  machines,
  originRepo,
  pushAfterTurn,
} from "./remote-support.js";
import { storeDir } from "../hardening/helpers.js";
import { killedAtCall } from "../restore/strace.js";
import { turn } from "./support.js";
import { claudeEvents } from "../integrations/events.js";
import { listIn, logIn, doctorIn } from "../helpers/in-process.js";

const { a, b, bare } = machines();

/** Waits for something a detached process does (no timing is asserted; the test's timeout bounds it). */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((r) => setTimeout(r, 100));
}

/** Records a two-turn session on machine A, with a commit A never pushed (its blobs are borrowed). */
async function recordOnA(name: string, url: string, twoTurns = true): Promise<{ repo: Repo; turns: any[] }> {
  const repo = originRepo(a, name, url, {
    "README.md": "hi\n",
    "src/app.ts": "one\n",
    ".gitignore": ".env\n",
  });
  repo.write({ "local.txt": "only on machine A\n" });
  repo.git("add", "local.txt");
  repo.git("commit", "-q", "-m", "not pushed");
  await turn(repo, "s1", "t1", () => {
    repo.write({ "README.md": "changed by the agent\n", "src/new.ts": "new\n" });
    repo.remove("src/app.ts");
  });
  if (twoTurns)
    await turn(repo, "s1", "t2", () => repo.write({ "src/new.ts": "newer\n", "local.txt": "edited\n" }));
  return { repo, turns: await logIn(repo, "s1") };
}

describe("push and fetch through a local bare repository", () => {
  it("carries a session to another machine, where it is listed, diffed, rewound and redone", async () => {
    const remote = bare();
    const { repo: onA, turns } = await recordOnA("a1", remote);
    const pushed = onA.ok("push");
    expect(pushed.sessions).toEqual([{ session: "s1", turns: 2, status: "created" }]);
    expect(pushed.snapshots.length).toBeGreaterThanOrEqual(3);
    // A ref per snapshot, one per session, and each snapshot's link (see push-edges.ts).
    expect(pushed.refs).toBe(2 * pushed.snapshots.length + 1);
    expect(pushed.bytes).toBeGreaterThan(0);
    // The pushed commits are complete on the remote, borrowed blobs (the unpushed commit's) included.
    a.git(remote, "fsck", "--connectivity-only", "--no-dangling");
    expect(a.git(remote, "cat-file", "-p", `${turns[1].before}:local.txt`)).toBe("only on machine A\n");
    // Incremental and idempotent: nothing is sent twice.
    expect(onA.ok("push")).toMatchObject({
      sessions: [],
      unchanged: ["s1"],
      snapshots: [],
      refs: 0,
      bytes: 0,
    });

    // An ordinary clone sees none of it.
    const plain = cloneOf(a, remote, "plain");
    expect(ghostRefs(a, plain.dir)).toEqual([]);
    expect(() => plain.git("cat-file", "-e", turns[0].after)).toThrow();

    const onB = cloneOf(b, remote, "b1");
    const fetched = onB.ok("fetch");
    expect(fetched.sessions).toEqual([{ session: "s1", turns: 2, status: "created" }]);
    expect([...fetched.snapshots].sort()).toEqual([...pushed.snapshots].sort());
    expect(fetched.bytes).toBeGreaterThan(0);
    expect(ghostRefs(b, onB.dir)).toEqual([]); // the shadow store got them, not the clone

    const [listed] = onB.ok("sessions");
    expect(listed).toMatchObject({ session: "s1", turns: 2, origin: { remote: `file://${remote}` } });
    expect(typeof listed.origin.host).toBe("string");
    expect(await logIn(onB, "s1")).toEqual(turns);
    const diff = onB.ok("diff", turns[0].before, turns[1].after);
    expect(diff.map((e: any) => `${e.status} ${e.path}`).sort()).toEqual([
      "added src/new.ts",
      "deleted src/app.ts",
      "modified README.md",
      "modified local.txt",
    ]);
    expect(onB.ok("show", turns[1].after).files).toContain("local.txt");

    // Rewind applies the usual conflict rules against B's files, which do not hold the agent's work.
    const refused = onB.cli(["rewind", "--session", "s1", "--to", "t2", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toContain("src/new.ts");
    onB.ok("restore", turns[1].after);
    expect(onB.read("local.txt")).toBe("edited\n");
    onB.ok("rewind", "--session", "s1", "--to", "t2");
    expect([onB.read("src/new.ts"), onB.read("local.txt")]).toEqual(["new\n", "only on machine A\n"]);
    onB.ok("redo", "--session", "s1");
    expect(onB.read("src/new.ts")).toBe("newer\n");
    onB.ok("rewind", "--session", "s1", "--to", "t1");
    expect([onB.read("README.md"), onB.read("src/app.ts"), onB.exists("src/new.ts")]).toEqual([
      "hi\n",
      "one\n",
      false,
    ]);

    // B's continuation extends A's journal: it goes back, and A sees the rewind.
    expect(onB.ok("push").sessions).toEqual([{ session: "s1", turns: 2, status: "updated" }]);
    expect(onA.ok("fetch").sessions).toEqual([{ session: "s1", turns: 2, status: "updated" }]);
    expect((await logIn(onA, "s1")).map((t: any) => t.state)).toEqual(["rewound", "rewound"]);
  });

  it("sends only what the remote lacks: files its branches or earlier snapshots hold go once", async () => {
    const remote = bare("incremental.git");
    a.git(remote, "config", "receive.unpackLimit", "1"); // every push leaves its pack as received
    const packs = () =>
      readdirSync(path.join(remote, "objects", "pack")).filter((name) => name.endsWith(".pack"));
    // 40 files of 8 KiB that do not compress, on the remote's main before any snapshot exists.
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/f${i}.txt`] = randomBytes(6144).toString("base64");
    const repo = originRepo(a, "incremental", remote, files);
    const pushOf = async (id: string, file: string) => {
      await turn(repo, "s", id, () => repo.write({ [file]: `${id}\n` }));
      const before = new Set(packs());
      const pushed = repo.ok("push");
      const added = packs().filter((name) => !before.has(name));
      const bytes = added.reduce(
        (sum, name) => sum + statSync(path.join(remote, "objects", "pack", name)).size,
        0,
      );
      return { pushed, bytes };
    };
    // Each snapshot holds all 40 files (320 KiB): main already has them, then the last snapshot.
    for (const [turn, file] of [
      ["1", "a.txt"],
      ["2", "src/b.txt"],
    ]) {
      const { pushed, bytes } = await pushOf(turn, file);
      expect(pushed.snapshots.length).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(16 * 1024);
      expect(pushed.bytes).toBeLessThan(16 * 1024);
    }
    // The commit that carried them is gone from the remote, which is complete and holds only our refs.
    expect(ghostRefs(a, remote).filter((ref) => !/\/(sessions|snapshots|links)\//.test(ref))).toEqual([]);
    a.git(remote, "fsck", "--connectivity-only", "--no-dangling");
    // Another machine gets all of it; fetching again, only what it lacks.
    const onB = cloneOf(b, remote, "incremental-b");
    expect(onB.ok("fetch").snapshots.length).toBeGreaterThan(0);
    // A carrier an interrupted push left behind is removed by the next push.
    const stray = "refs/ghostcommit/root/carriers/0123456789abcdef";
    a.git(remote, "update-ref", stray, a.git(remote, "rev-parse", "main").trim());
    await pushOf("3", "c.txt");
    expect(ghostRefs(a, remote)).not.toContain(stray);
    const again = onB.ok("fetch");
    expect(again.snapshots.length).toBeGreaterThan(0);
    expect(again.bytes).toBeLessThan(16 * 1024);
    // The links that let git leave the rest out are not kept: they would hold dropped snapshots.
    const home = b.env.GHOSTCOMMIT_HOME as string;
    const kept = spawnSync("sh", [
      "-c",
      'find "$0" -path "*fetched-links*"; grep -rls fetched-links "$0" --include=packed-refs',
      home,
    ]);
    expect(kept.stdout.toString()).toBe("");
    onB.ok("restore", (await logIn(onB, "s"))[1].before);
    expect([onB.exists("a.txt"), onB.exists("src/b.txt"), onB.read("src/f7.txt")]).toEqual([
      true,
      false,
      files["src/f7.txt"],
    ]);
  });

  it("a new machine's first push (a cloud sandbox) is fetched without the files the clone already has", async () => {
    const remote = bare("sandbox.git");
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/f${i}.txt`] = randomBytes(6144).toString("base64");
    originRepo(a, "sandbox-seed", remote, files);
    const laptop = cloneOf(b, remote, "laptop");
    for (const task of ["t1", "t2"]) {
      const sandbox = cloneOf(a, remote, `sandbox-${task}`); // a fresh clone and store per task
      await turn(sandbox, task, "1", () => sandbox.write({ "src/f1.txt": `${task}\n` }));
      expect(sandbox.ok("push").bytes).toBeLessThan(16 * 1024);
      const fetched = laptop.ok("fetch");
      expect(fetched.sessions.map((x: any) => x.session)).toEqual([task]);
      expect(fetched.bytes).toBeLessThan(16 * 1024);
      laptop.ok("restore", (await logIn(laptop, task))[0].after);
      expect([laptop.read("src/f1.txt"), laptop.read("src/f2.txt")]).toEqual([
        `${task}\n`,
        files["src/f2.txt"],
      ]);
    }
  });

  it("refuses to send files the repository ignores unless --include-ignored", async () => {
    const remote = bare("secrets.git");
    const repo = originRepo(a, "secrets", remote, { ".gitignore": ".env\n:token\n", "app.ts": "1\n" });
    repo.ok("turn", "begin", "--session", "s", "--turn", "1");
    // Names git would read as pathspec magic: ":token" as "token", ":!notes.txt" as an exclusion.
    repo.write({
      ".env": "TOKEN=hunter2\n",
      ":token": "hunter3\n",
      ":!notes.txt": "mine\n",
      "app.ts": "2\n",
    });
    repo.ok("touch", "--session", "s", ".env", ":token");
    repo.ok("turn", "end", "--session", "s");
    const refused = repo.cli(["push", "--json"]);
    expect(refused.status, refused.stderr).toBe(3);
    expect(refused.json.error.code).toBe("conflict");
    expect(refused.json.conflicts).toEqual([".env", ":token"]);
    const [{ before, after }] = await logIn(repo, "s");
    // Which snapshots hold them, and what each is: the ones to look at (or drop). The touch made
    // the files' content then the turn's before-state (see README's touch).
    expect(refused.stderr).toContain(
      `ignores (.env, :token), in snapshots ${after.slice(0, 12)} (after turn 1 of session s), ${before.slice(0, 12)} (before turn 1 of session s); nothing was sent, --include-ignored sends them`,
    );
    expect(ghostRefs(a, remote)).toEqual([]);
    const pushed = repo.ok("push", "--include-ignored");
    expect(pushed.snapshots).toContain(after);
    expect(a.git(remote, "cat-file", "-p", `${after}:.env`)).toBe("TOKEN=hunter2\n");
  });

  // Found in a trial: a file captured before a .ghostignore named it was pushed, where the same
  // rule in a .gitignore refused the push.
  it("refuses a file a .ghostignore names today, as a .gitignore line would", async () => {
    const remote = bare("ghostignored-since.git");
    const repo = originRepo(a, "ghostignored-since", remote, { "app.ts": "1\n" });
    await turn(repo, "s", "1", () => repo.write({ "web/tokens.txt": "LATESECRET\n", "app.ts": "2\n" }));
    repo.write({ "web/.ghostignore": "tokens.txt\n" });
    const refused = repo.cli(["push", "--json"]);
    expect(refused.status, refused.stderr).toBe(3);
    expect(refused.json.conflicts).toEqual(["web/tokens.txt"]);
    expect(refused.stderr).toContain(
      "snapshots hold 1 file the repository or a .ghostignore ignores (web/tokens.txt)",
    );
    expect(ghostRefs(a, remote)).toEqual([]);
  });

  it("refuses a file captured before the repository came to ignore it, as ignored today", async () => {
    // An agent writes .env in one turn and ignores it in the next: the first turn's after snapshot
    // holds it without any touch or --include naming it.
    const remote = bare("ignored-since.git");
    const repo = originRepo(a, "ignored-since", remote, { "app.ts": "1\n", "sub/keep.ts": "k\n" });
    await turn(repo, "s", "1", () => repo.write({ ".env": "TOKEN=hunter2\n", "sub/id.key": "secret\n" }));
    await turn(repo, "s", "2", () => repo.write({ ".gitignore": ".env\n*.key\n", "app.ts": "2\n" }));
    const refused = repo.cli(["push", "--json"]);
    expect(refused.status, refused.stderr).toBe(3);
    expect(refused.json.conflicts).toEqual([".env", "sub/id.key"]);
    expect(ghostRefs(a, remote)).toEqual([]);
    // Committed, a file is the repository's own: git's rules no longer apply to it.
    repo.git("add", "-f", ".env", "sub/id.key");
    repo.git("commit", "-qm", "tracked now");
    expect(repo.ok("push").sessions).toEqual([{ session: "s", turns: 2, status: "created" }]);
  });

  it("refuses a file its snapshot's own rules ignored once those rules are gone from the work tree", async () => {
    const remote = bare("rules-gone.git");
    const repo = originRepo(a, "rules-gone", remote, { "app.ts": "1\n", ".gitignore": "*.log\n" });
    repo.write({ "keep.log": "committed\n" });
    repo.git("add", "-f", "keep.log");
    repo.git("commit", "-qm", "a log the repository keeps");
    repo.git("push", "-q", "origin", "main");
    repo.ok("turn", "begin", "--session", "s", "--turn", "1");
    repo.write({ "certs/.gitignore": "*.pem\n", "certs/key.pem": "PRIVATE\n", "keep.log": "edited\n" });
    repo.ok("touch", "--session", "s", "certs/key.pem");
    repo.ok("turn", "end", "--session", "s");
    expect(repo.cli(["push", "--json"]).json.conflicts).toEqual(["certs/key.pem"]);
    // The folder goes, its rule with it: the turns' snapshots still hold the key.
    await turn(repo, "s", "2", () => repo.remove("certs"));
    const refused = repo.cli(["push", "--json"]);
    expect(refused.status, refused.stderr).toBe(3);
    // A tracked file the rules match (keep.log) is the repository's own, as git has it.
    expect(refused.json.conflicts).toEqual(["certs/key.pem"]);
    expect(ghostRefs(a, remote)).toEqual([]);
    expect(repo.ok("push", "--include-ignored").sessions).toEqual([
      { session: "s", turns: 2, status: "created" },
    ]);
  });

  it("from a subdirectory's workspace, refuses a file a rule above it ignored, once that rule is gone from the work tree", () => {
    const remote = bare("rules-above.git");
    const repo = originRepo(a, "rules-above", remote, { ".gitignore": "*.key\n", "pkg/app.ts": "1\n" });
    const pkg = repo.path("pkg");
    a.ok(pkg, "turn", "begin", "--session", "s", "--turn", "1");
    repo.write({ "pkg/my.key": "PRIVATE\n" });
    a.ok(pkg, "touch", "--session", "s", "my.key");
    a.ok(pkg, "turn", "end", "--session", "s");
    expect(a.cli(pkg, ["push", "--json"]).json.conflicts).toEqual(["my.key"]);
    repo.write({ ".gitignore": "" }); // the rule, gone from the work tree (HEAD still has it)
    const refused = a.cli(pkg, ["push", "--json"]);
    expect(refused.status, refused.stderr).toBe(3);
    expect(refused.json.conflicts).toEqual(["my.key"]);
    expect(ghostRefs(a, remote)).toEqual([]);
  });

  it("keeps a plain folder's history apart from a repository's on one remote", async () => {
    const remote = bare("shared.git");
    const onA = originRepo(a, "shared-a", remote, { "f.txt": "0\n" });
    await turn(onA, "s", "1", () => onA.write({ "f.txt": "1\n" }));
    onA.ok("push");
    const folder = a.dir("folder");
    writeFileSync(path.join(folder, "x.txt"), "x\n");
    const taken = a.ok(folder, "snapshot", "-m", "folder");
    expect(a.ok(folder, "push", remote, "--snapshots").snapshots).toEqual([taken.id]);
    expect(ghostRefs(a, remote)).toContain(`refs/ghostcommit/plain/snapshots/${taken.id}`);
    // The repository's other clone brings its sessions, not the folder's snapshot...
    const onB = cloneOf(b, remote, "shared-b");
    const fetched = onB.ok("fetch");
    expect(fetched.sessions.map((s: any) => s.session)).toEqual(["s"]);
    expect(fetched.snapshots).not.toContain(taken.id);
    expect((await listIn(onB)).map((s: any) => s.message)).not.toContain("folder");
    // ...and a plain folder elsewhere brings the folder's, not the repository's sessions.
    const other = b.dir("other-folder");
    const there = b.ok(other, "fetch", remote);
    expect([there.sessions, there.snapshots]).toEqual([[], [taken.id]]);
  });

  it("never lists another machine's turns under a session id of this one, wherever a fetch is cut off", async () => {
    const remote = bare("cut-collide.git");
    const onA = originRepo(a, "cut-ca", remote, { "f.txt": "0\n" });
    const onB = cloneOf(b, remote, "cut-cb");
    await turn(onA, "same", "1", () => onA.write({ "f.txt": "A\n" }));
    await turn(onA, "same", "2", () => onA.write({ "f.txt": "AA\n" }));
    await turn(onA, "other", "1", () => onA.write({ "g.txt": "A\n" }));
    onA.ok("push");
    await turn(onB, "same", "1", () => onB.write({ "f.txt": "B\n" }));
    const bList = (await listIn(onB)).map((s: any) => s.id);
    const aSame = new Set((await logIn(onA, "same")).flatMap((t: any) => [t.before, t.after]));
    // Killed at each rename in turn (git's ref writes, then the journals'), until one runs through.
    // What the store lists is read from its refs (a git call, not a command line per kill).
    const storeGit = path.join(storeDir(b, onB.dir), "git");
    const snapshotRefs = () => ghostRefs(b, storeGit).filter((ref) => ref.includes("/snapshots/"));
    // One that runs through leaves the session in conflict out, with status 3.
    let status: number | null = null;
    let killed = 0;
    for (let n = 1; status !== 3; n++) {
      expect(n).toBeLessThan(200);
      status = killedAtCall([process.execPath, CLI, "fetch"], "rename", n, {
        cwd: onB.dir,
        env: b.env,
      }).status;
      if (status !== 3) killed++; // it, or a git it ran, was killed
      const listed = snapshotRefs().map((ref) => ref.slice(ref.lastIndexOf("/") + 1));
      expect(
        listed.filter((id: string) => aSame.has(id)),
        `killed at rename ${n}`,
      ).toEqual([]);
    }
    // Killed at every rename but the last: a loop that never killed would prove nothing.
    expect(killed).toBeGreaterThan(3);
    expect((await logIn(onB, "same")).map((t: any) => t.prompt)).toEqual(["prompt 1"]);
    // The fetch that ran through brought the other session, and no temporary ref is left.
    const listed = (await listIn(onB)).map((s: any) => s.id);
    const other = (await logIn(onB, "other")).flatMap((t: any) => [t.before, t.after]);
    expect(other.filter((id: string) => !listed.includes(id))).toEqual([]);
    expect(listed.filter((id: string) => !bList.includes(id)).length).toBeGreaterThan(0);
    expect((await doctorIn(onB)).problems).toEqual([]);
    // A commit that is no snapshot under the remote's snapshot refs (forged, or damaged) is not
    // listed either: it would read as a damaged snapshot.
    const main = a.git(remote, "rev-parse", "main").trim();
    a.git(remote, "update-ref", `refs/ghostcommit/root/snapshots/${main}`, main);
    const again = onB.cli(["fetch", "--json"]);
    expect([again.status, again.json.snapshots]).toEqual([3, []]);
    expect((await listIn(onB)).map((s: any) => s.id)).toEqual(listed);
    expect((await doctorIn(onB)).problems).toEqual([]);
  });

  it("tells an agent of the rewinds done on its own machine, not of those a fetch brought", async () => {
    const remote = bare("told.git");
    const onA = originRepo(a, "told-a", remote, { "f.txt": "0\n" });
    const prompt = (sandbox: typeof a, repo: Repo, text: string) => {
      const result = sandbox.cli(
        repo.dir,
        ["hook", "claude-code"],
        JSON.stringify(claudeEvents.prompt(repo.dir, "s", text)),
      );
      expect(result.status).toBe(0);
      return result.stdout;
    };
    await turn(onA, "s", "1", () => onA.write({ "f.txt": "1\n" }));
    await turn(onA, "s", "2", () => onA.write({ "f.txt": "2\n", "new.txt": "n\n" }));
    onA.ok("push");
    // Another machine takes the session over, rewinds turn 2 there and hands it back (found in a trial).
    const onB = cloneOf(b, remote, "told-b");
    onB.ok("fetch");
    onB.ok("restore", (await logIn(onB, "s"))[1].after);
    onB.ok("rewind", "--session", "s", "--to", "2");
    onB.ok("push");
    expect(prompt(b, onB, "on B")).toContain("Rewound turn 2: these files are back");
    expect(onA.ok("fetch").sessions).toEqual([{ session: "s", turns: 2, status: "updated" }]);
    // A's files never went back: its agent is told nothing of B's rewind.
    expect(prompt(a, onA, "on A")).not.toContain("additionalContext");
    expect([onA.read("f.txt"), onA.read("new.txt")]).toEqual(["2\n", "n\n"]);
    // One done here after the fetch is told, as ever.
    const send = (event: unknown) =>
      expect(a.cli(onA.dir, ["hook", "claude-code"], JSON.stringify(event)).status).toBe(0);
    send(claudeEvents.write(onA.dir, "s", onA.path("g.txt")));
    onA.write({ "g.txt": "3\n" });
    send(claudeEvents.wrote(onA.dir, "s", onA.path("g.txt")));
    send(claudeEvents.stop(onA.dir, "s"));
    onA.ok("rewind", "--session", "s", "--to", "3");
    const told = prompt(a, onA, "again");
    expect(told).toContain("Rewound turn 3: these files are back");
    expect(told).not.toContain("turn 2");
  });

  it("never lets two machines' sessions with one id overwrite each other", async () => {
    const remote = bare("collide.git");
    const onA = originRepo(a, "ca", remote, { "f.txt": "0\n" });
    const onB = cloneOf(b, remote, "cb");
    await turn(onA, "same", "1", () => onA.write({ "f.txt": "A\n" }));
    await turn(onB, "same", "1", () => onB.write({ "f.txt": "B\n" }));
    await turn(onB, "other", "1", () => onB.write({ "g.txt": "B\n" }));
    onA.ok("push");
    const before = ghostRefs(a, remote).map((ref) => `${ref} ${a.git(remote, "rev-parse", ref).trim()}`);

    const refused = onB.cli(["push", "--json"]);
    expect(refused.status).toBe(3);
    expect(refused.json.conflicts).toEqual(["same"]);
    expect(refused.stderr).toMatch(
      /different history under the same session id: same \(pushed from .+\); nothing was sent/,
    );
    expect(ghostRefs(a, remote).map((ref) => `${ref} ${a.git(remote, "rev-parse", ref).trim()}`)).toEqual(
      before,
    );
    expect(onB.ok("push", "--session", "other").sessions.map((s: any) => s.session)).toEqual(["other"]);

    // Fetching keeps B's own session and says which one it did not take.
    const bLog = await logIn(onB, "same");
    const bList = await listIn(onB);
    const fetch = onB.cli(["fetch", "--json"]);
    // Refused in part, as a refused push is: status 3, the rest fetched.
    expect(fetch.status).toBe(3);
    expect(fetch.stderr).toBe(
      "ghostcommit: 1 session not fetched (listed under conflicts, each with why); the rest was fetched\n",
    );
    const fetched = fetch.json;
    expect(fetched.conflicts.map((c: any) => c.session)).toEqual(["same"]);
    expect(fetched.conflicts[0].reason).toMatch(/different history under session id same/);
    expect(await logIn(onB, "same")).toEqual(bLog);
    // Nor are A's snapshots of that session brought in, to be listed as B's own turns.
    expect(fetched.snapshots).toEqual([]);
    expect(await listIn(onB)).toEqual(bList);
  });

  it("pushes other sessions when the remote only has later turns of one (another machine continued it)", async () => {
    const remote = bare("behind.git");
    const onA = originRepo(a, "behind-a", remote, { "f.txt": "0\n" });
    await turn(onA, "s", "1", () => onA.write({ "f.txt": "A\n" }));
    onA.ok("push");
    const onB = cloneOf(b, remote, "behind-b");
    onB.ok("fetch");
    onB.ok("restore", (await logIn(onB, "s"))[0].after);
    await turn(onB, "s", "2", () => onB.write({ "g.txt": "B\n" }));
    onB.ok("push");
    // A record A began to write when it was killed: a torn last line, which never happened (one
    // that is no start of the record B wrote next).
    const sessions = path.join(storeDir(a, onA.dir), "sessions");
    const [journalFile] = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
    appendFileSync(path.join(sessions, journalFile), '{"e":"mark","turn":"1","tr');
    await turn(onA, "other", "1", () => onA.write({ "h.txt": "A\n" }));
    const run = onA.cli(["push"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/s {2}the remote has later turns of it: fetch brings them/);
    expect(await logIn(onA, "other")).toHaveLength(1);
    const pushed = onA.ok("push");
    expect(pushed).toMatchObject({ sessions: [], unchanged: ["other"], behind: ["s"], refs: 0 });
    // Before, fetch took the torn line for another history: a conflict, and B's turn 2 never came.
    expect(onA.ok("fetch").sessions).toEqual([{ session: "s", turns: 2, status: "updated" }]);
    expect(onA.ok("push")).toMatchObject({ unchanged: ["other", "s"].sort(), behind: [] });
    // Nothing recorded: nothing to push, said as such (the remote is not asked).
    const empty = originRepo(a, "behind-empty", bare("behind-empty.git"), { "f.txt": "0\n" });
    expect(empty.cli(["push"]).stdout).toMatch(/^nothing to push: no session was recorded/);
    // With --snapshots, a second push finds every snapshot there: up to date, not "nothing recorded".
    empty.ok("snapshot");
    expect(empty.ok("push", "--snapshots").snapshots).toHaveLength(1);
    expect(empty.cli(["push", "--snapshots"]).stdout).toMatch(/^\S+behind-empty\.git is up to date\n$/);
  });

  it("refuses as a conflict, not as a failed transaction, when another machine pushed the same session id meanwhile", async () => {
    const remote = bare("race.git");
    const onA = originRepo(a, "race-a", remote, { "f.txt": "0\n" });
    const onB = cloneOf(b, remote, "race-b");
    await turn(onA, "task", "1", () => onA.write({ "f.txt": "A\n" }));
    await turn(onB, "task", "1", () => onB.write({ "f.txt": "B\n" }));
    // While A's push waits in the remote's pre-receive, B's push of the same session lands.
    const envB = Object.entries(b.env)
      .map(([k, v]) => `${k}='${v}'`)
      .join(" ");
    hook(
      remote,
      "pre-receive",
      `cat >/dev/null; [ -e "$GIT_DIR/raced" ] && exit 0; touch "$GIT_DIR/raced"
cd '${onB.dir}' && env -i ${envB} '${process.execPath}' '${CLI}' push >/dev/null 2>&1; exit 0`,
    );
    const pushed = onA.cli(["push", "--json"]);
    expect(pushed.status, pushed.stderr).toBe(3);
    expect(pushed.json.error.code).toBe("conflict");
    expect(pushed.json.conflicts).toEqual(["task"]);
    expect(ghostRefs(a, remote).filter((ref) => ref.includes("/carriers/"))).toEqual([]);
  });

  it("reports from each remote only the sessions that remote holds", async () => {
    const [r1, r2] = [bare("r1.git"), bare("r2.git")];
    const repo = originRepo(a, "two-remotes", r1, { "f.txt": "0\n" });
    await turn(repo, "x", "1", () => repo.write({ "f.txt": "x\n" }));
    await turn(repo, "y", "1", () => repo.write({ "f.txt": "y\n" }));
    repo.ok("push", r1, "--session", "x");
    repo.ok("push", r2, "--session", "y");
    const clone = cloneOf(b, r1, "two-remotes-b");
    expect(clone.ok("fetch", r1)).toMatchObject({ sessions: [{ session: "x" }], unchanged: [] });
    expect(clone.ok("fetch", r2)).toMatchObject({ sessions: [{ session: "y" }], unchanged: [] });
    expect(clone.ok("fetch", r1)).toMatchObject({ sessions: [], unchanged: ["x"], conflicts: [] });
    expect(clone.ok("fetch", r2)).toMatchObject({ sessions: [], unchanged: ["y"], conflicts: [] });
  });

  it("leaves the remote as it was when a push is cut off or partly refused", async () => {
    const remote = bare("cut.git");
    const { repo } = await recordOnA("cut", remote, false);
    // The server dies after receiving the objects, before any ref moves.
    const killer = hook(remote, "pre-receive", "kill -9 $PPID");
    const cut = repo.cli(["push", "--json"]);
    expect(cut.status).toBe(1);
    expect(cut.json.error.code).toBe("git-failed");
    expect(ghostRefs(a, remote)).toEqual([]);
    // One ref refused: the atomic push takes none of the others either.
    hook(
      remote,
      "update",
      'case "$1" in */sessions/*) echo "no sessions here, by policy" >&2; exit 1;; esac',
    );
    rmSync(killer);
    const refused = repo.cli(["push"]);
    expect(refused.status).toBe(1);
    // git's reason and the remote's own words, not only "failed to push some refs".
    expect(refused.stderr).toMatch(
      /^ghostcommit: cannot push to \S+: refused: (hook declined|atomic push failed)/,
    );
    expect(refused.stderr).toContain("(the remote said: no sessions here, by policy)");
    expect(ghostRefs(a, remote)).toEqual([]);
    rmSync(`${remote}/hooks/update`);
    const pushed = repo.ok("push");
    expect(ghostRefs(a, remote)).toHaveLength(pushed.refs);
    a.git(remote, "fsck", "--connectivity-only", "--no-dangling");
  });
});

describe("reaching the remote", () => {
  it("uses the transport settings of the repository's own config (as a CI checkout leaves them)", async () => {
    const remote = bare("ssh.git");
    const repo = a.repo("viassh", { "f.txt": "0\n" });
    // A stand-in for ssh that runs the remote command locally; only the repository's config names it.
    const ssh = `${a.home}/fake-ssh`;
    writeFileSync(ssh, '#!/bin/sh\nfor last; do :; done\nexec sh -c "$last"\n', { mode: 0o755 });
    repo.git("config", "--local", "core.sshCommand", ssh);
    repo.git("remote", "add", "origin", `ssh://example.invalid${remote}`);
    await turn(repo, "s", "1", () => repo.write({ "f.txt": "1\n" }));
    expect(repo.ok("push").sessions).toEqual([{ session: "s", turns: 1, status: "created" }]);
    expect(ghostRefs(a, remote).some((ref) => ref.includes("/sessions/"))).toBe(true);
  });
});

describe("a remote configured as a relative path", () => {
  it("is reached from the repository's top level, as git reaches it, when the workspace is a subdirectory", async () => {
    const remote = path.join(a.home, "relative.git");
    a.git(a.home, "init", "-q", "--bare", "-b", "main", remote);
    const repo = originRepo(a, "outer/relative", remote, { "sub/f.txt": "0\n" });
    repo.git("remote", "set-url", "origin", "../../relative.git");
    // Where that path would lead from the subdirectory: a repository that must not be reached.
    const decoy = path.join(a.home, "outer", "relative.git");
    a.git(a.home, "init", "-q", "--bare", decoy);
    const sub = new Repo(a, repo.path("sub"));
    await turn(sub, "s", "1", () => sub.write({ "f.txt": "1\n" }));
    expect(sub.ok("push")).toMatchObject({
      url: remote,
      sessions: [{ session: "s", turns: 1, status: "created" }],
    });
    expect(ghostRefs(a, remote).some((ref) => ref.includes("/sessions/"))).toBe(true);
    expect(ghostRefs(a, decoy)).toEqual([]);

    const clone = cloneOf(b, remote, "relative-b");
    clone.git("remote", "set-url", "origin", path.relative(clone.dir, remote));
    const onB = new Repo(b, clone.path("sub"));
    expect(onB.ok("fetch")).toMatchObject({
      url: remote,
      sessions: [{ session: "s", turns: 1, status: "created" }],
    });
    // A path given on the command line means what it means from the current directory.
    await turn(sub, "s", "2", () => sub.write({ "f.txt": "2\n" }));
    expect(sub.ok("push", path.relative(sub.dir, remote)).sessions).toEqual([
      { session: "s", turns: 2, status: "updated" },
    ]);
  });
});

describe("session and turn ids with control characters", () => {
  it("are printed as escapes by every command, ids a remote brings included; JSON keeps them exact", async () => {
    const S = "esc\x1b]0;pwned\x07x";
    const T = "t\x1b[2J";
    const other = "two\x1b[2Jx";
    const host = "box\x1b]0;pwned\x07";
    const remote = bare("control.git");
    const onA = originRepo(a, "control-a", remote, { "f.txt": "0\n" });
    const printed: string[] = [];
    const run = (repo: Repo, ...args: string[]) => {
      const result = repo.cli(args);
      printed.push(result.stdout + result.stderr);
      return result;
    };
    run(onA, "turn", "begin", "--session", S, "--turn", T, "--prompt", "hi");
    onA.write({ "f.txt": "1\n" });
    run(onA, "turn", "end", "--session", S, "--turn", T);
    await turn(onA, other, "1", () => onA.write({ "g.txt": "1\n" }));
    run(onA, "sessions");
    run(onA, "log", "--session", S);
    run(onA, "list");
    run(onA, "show", (await listIn(onA))[0].id);
    run(onA, "rewind", "--session", S, "--to", T, "--dry-run");
    const rewound = run(onA, "rewind", "--session", S, "--to", T);
    run(onA, "redo", "--session", S);
    const refused = run(onA, "turn", "end", "--session", S, "--turn", "q\x1b[2J");
    run(onA, "push");
    // The pushing machine's name, as the remote holds it in each session commit.
    const git = (input: string, ...args: string[]) =>
      execFileSync("git", args, { cwd: remote, env: a.env, input, encoding: "utf8" }).trim();
    for (const ref of ghostRefs(a, remote).filter((r) => r.includes("/sessions/"))) {
      const named = git(JSON.stringify({ host }), "hash-object", "-w", "--stdin");
      const journal = git("", "rev-parse", `${ref}:journal.jsonl`);
      const tree = git(
        `100644 blob ${journal}\tjournal.jsonl\n100644 blob ${named}\torigin.json\n`,
        "mktree",
      );
      git("", "update-ref", ref, git("", "commit-tree", tree, "-m", "ghostcommit session journal"));
    }

    const onB = cloneOf(b, remote, "control-b");
    await turn(onB, other, "mine", () => onB.write({ "f.txt": "b\n" }));
    const fetched = run(onB, "fetch");
    const listed = run(onB, "sessions");
    run(onB, "log", "--session", S);
    run(onB, "doctor");
    // The push after the turn is refused for the other session: doctor says so, naming it.
    pushAfterTurn(onB, { remote: "origin" });
    cliTurn(onB, S, "3", () => onB.write({ "f.txt": "3\n" }));
    await until(async () => (await doctorIn(onB)).problems.length > 0);
    const doctor = run(onB, "doctor");
    const conflict = run(onB, "push");
    expect(run(onB, "push", "--session", S).status).toBe(0);
    const behind = run(onA, "push");

    for (const out of printed) expect(out).not.toMatch(/[\x07\x1b]/);
    expect(listed.stdout).toContain("esc\\e]0;pwned\\ax");
    expect(listed.stdout).toContain(`fetched from box\\e]0;pwned\\a via`);
    expect(fetched.stdout).toContain("two\\e[2Jx  not fetched: this workspace has a different history");
    expect(rewound.stdout).toContain("rewound turn t\\e[2J of session esc\\e]0;pwned\\ax");
    expect(rewound.stdout).toContain("redo --session $'esc\\033]0;pwned\\007x'");
    expect(refused.stderr).toContain("session esc\\e]0;pwned\\ax has no turn q\\e[2J");
    expect(conflict.stderr).toContain("same session id: two\\e[2Jx (pushed from box\\e]0;pwned\\a)");
    expect(doctor.stdout).toContain("same session id: two\\e[2Jx (pushed from box\\e]0;pwned\\a)");
    expect(behind.stdout).toContain("esc\\e]0;pwned\\ax  the remote has later turns of it");
    expect(onB.ok("sessions").find((s: any) => s.session === S)?.origin.host).toBe(host);
    expect((await logIn(onA, S))[0].turn).toBe(T);
  });
});

describe("a fetch killed mid-transfer", () => {
  it("leaves git's temp pack only until nothing can be writing it: doctor names it, the next fetch or a repair removes it", async () => {
    const remote = bare("killed.git");
    const onA = originRepo(a, "killed-a", remote, { "f.txt": "0\n" });
    await turn(onA, "big", "1", () => onA.write({ "big1.bin": randomBytes(3 << 20) }));
    onA.ok("push");
    const onB = cloneOf(b, remote, "killed-b");
    // The remote sends the first 1 MB of the pack, then stalls: the fetch is caught mid-transfer.
    const stall = path.join(b.home, "stall.sh");
    writeFileSync(stall, '#!/bin/sh\n"$@" | { head -c 1000000; sleep 300; cat; }\n', { mode: 0o755 });
    const stallConfig = path.join(b.home, "stall.gitconfig");
    writeFileSync(stallConfig, `[uploadpack]\n\tpackObjectsHook = ${stall}\n`);
    const listed = () => {
      try {
        return readdirSync(path.join(b.home, "data", "workspaces"), { recursive: true });
      } catch {
        return []; // not made yet, or a directory renamed as it was read (a store's first set-up)
      }
    };
    const temps = () =>
      listed()
        .map(String)
        .filter((name) => /objects\/pack\/tmp_pack_[A-Za-z0-9]{6}$/.test(name))
        .map((name) => path.join(b.home, "data", "workspaces", name));
    const stalledFetch = async () => {
      const child = spawn(process.execPath, [CLI, "fetch"], {
        cwd: onB.dir,
        env: { ...b.env, GIT_CONFIG_GLOBAL: stallConfig },
        detached: true, // its own process group, git's processes included
        stdio: "ignore",
      });
      await until(() => temps().some((file) => statSync(file).size >= 900_000));
      // Killed, it must be reaped before it reads as dead (a zombie still answers kill -0).
      const exited = new Promise((resolve) => child.once("exit", resolve));
      return { group: child.pid!, exited };
    };
    const gone = (group: number) => {
      try {
        process.kill(-group, 0);
        return false;
      } catch {
        return true;
      }
    };
    const leftovers = () =>
      onB.cli(["doctor", "--json"]).json.problems.filter((p: any) => p.code === "leftover-temp-pack");

    // Only ghostcommit is killed: its git goes on receiving, and its temp pack is left alone.
    const { group: orphaned, exited } = await stalledFetch();
    try {
      process.kill(orphaned, "SIGKILL");
      await exited;
      const [live] = temps();
      expect(leftovers()).toEqual([]);
      expect(onB.ok("fetch").sessions).toEqual([{ session: "big", turns: 1, status: "created" }]);
      expect(temps()).toEqual([live]);
      const repaired = onB.ok("doctor", "--repair").repaired.map((r: any) => r.path);
      expect(repaired).not.toContain(live);
      expect(temps()).toEqual([live]);
    } finally {
      if (!gone(orphaned)) process.kill(-orphaned, "SIGKILL");
    }
    await until(() => gone(orphaned));
    // Now dead: doctor names it with its size, and a repair removes it.
    const [dead] = temps();
    expect(statSync(dead).size).toBeGreaterThan(900_000); // 1 MB received: "977 KiB"
    expect(leftovers()).toEqual([
      expect.objectContaining({
        path: dead,
        message: expect.stringMatching(/ \(\d+(\.\d)? KiB\) was left by a git that died/),
      }),
    ]);
    expect(onB.cli(["doctor"]).stdout).toContain(dead);
    expect(onB.ok("doctor", "--repair").repaired).toEqual([
      expect.objectContaining({ code: "removed-leftover", path: dead }),
    ]);
    expect(temps()).toEqual([]);

    // The whole fetch killed, git with it: the next fetch removes what it left.
    await turn(onA, "big", "2", () => onA.write({ "big2.bin": randomBytes(3 << 20) }));
    onA.ok("push");
    const { group: killed, exited: killedExited } = await stalledFetch();
    process.kill(-killed, "SIGKILL");
    await killedExited;
    await until(() => gone(killed));
    expect(temps()).toHaveLength(1);
    expect(onB.ok("fetch").sessions).toEqual([{ session: "big", turns: 2, status: "updated" }]);
    expect(temps()).toEqual([]);
    expect((await doctorIn(onB)).problems).toEqual([]);
  });
});

describe("a remote that cannot be reached", () => {
  it("is reported by git's cause, not by the advice git prints after it", async () => {
    const missing = `${a.home}/missing.git`;
    const repo = a.repo("unreachable", { "f.txt": "0\n" });
    repo.git("remote", "add", "origin", missing);
    await turn(repo, "s", "1", () => repo.write({ "f.txt": "1\n" }));
    // git: "fatal: '…' does not appear to be a git repository", "fatal: Could not read from remote
    // repository.", then "Please make sure you have the correct access rights / and the repository exists."
    for (const [command, verb] of [
      ["push", "reach"],
      ["fetch", "fetch from"],
    ]) {
      const run = repo.cli([command]);
      expect(run.status, command).toBe(1);
      expect(run.stderr.trim()).toBe(
        `ghostcommit: cannot ${verb} ${missing}: '${missing}' does not appear to be a git repository`,
      );
    }
  });
});

describe("push after each turn", () => {
  it("is never set by a repository's own .ghostcommit.json, which a clone brings and an agent can write: doctor names it", async () => {
    const elsewhere = bare("theirs.git");
    const repo = originRepo(a, "cloned-config", bare("origin-of-clone.git"), {
      ".gitignore": ".env\n",
      "app.js": "1\n",
      ".ghostcommit.json": JSON.stringify({
        push: { remote: elsewhere, after: "turn", includeIgnored: true },
      }),
    });
    repo.write({ ".env": "SECRET=hunter2\n" });
    cliTurn(repo, "s", "1", () => {
      repo.ok("touch", "--session", "s", ".env");
      repo.write({ ".env": "SECRET=2\n" });
    });
    await new Promise((done) => setTimeout(done, 1500)); // a background push would have gone by now
    expect(ghostRefs(a, elsewhere)).toEqual([]);
    const problems = repo.cli(["doctor", "--json"]).json.problems;
    expect(problems).toEqual([
      expect.objectContaining({
        code: "push-setting-ignored",
        message: expect.stringContaining(
          `.ghostcommit.json sets "push", which is taken only from your own config (`,
        ),
      }),
    ]);
    // The rest of the file still counts, and a push by hand goes where you say.
    expect(repo.ok("snapshot").id).toMatch(/^[0-9a-f]{40}$/);
  });

  it("pushes in the background without holding up the turn, and doctor shows a failed push", async () => {
    const remote = bare("auto.git");
    const repo = originRepo(a, "auto", remote, { "f.txt": "0\n" });
    pushAfterTurn(repo, { remote: "origin" });
    // The remote holds the push until told to go on: the turn must end regardless.
    const gate = `${remote}/go`;
    hook(remote, "pre-receive", `while [ ! -f '${gate}' ]; do sleep 0.05; done`);
    try {
      cliTurn(repo, "bg", "1", () => repo.write({ "f.txt": "1\n" }));
      expect(ghostRefs(a, remote)).toEqual([]);
    } finally {
      writeFileSync(gate, "");
    }
    await until(() => ghostRefs(a, remote).some((ref) => ref.includes("/sessions/")));
    expect((await doctorIn(repo)).problems).toEqual([]);

    pushAfterTurn(repo, { remote: "nowhere" });
    cliTurn(repo, "bg", "2", () => repo.write({ "f.txt": "2\n" }));
    let problems: any[] = [];
    await until(async () => {
      problems = (await doctorIn(repo)).problems ?? [];
      return problems.length > 0;
    });
    expect(problems).toEqual([
      expect.objectContaining({ code: "push-failed", message: expect.stringMatching(/nowhere/) }),
    ]);
    // A push by hand does not clear it (only a background one does): the advice says so.
    expect(problems[0].message).toContain(
      "`ghostcommit push nowhere` sends them now (this stays reported until a background push after a turn succeeds)",
    );
  });

  it("sends the other sessions when one is in conflict on the remote, and doctor names it without a futile retry", async () => {
    const remote = bare("auto-collide.git");
    const onA = originRepo(a, "auto-ca", remote, { "f.txt": "0\n" });
    const onB = cloneOf(b, remote, "auto-cb");
    await turn(onA, "same", "1", () => onA.write({ "f.txt": "A\n" }));
    onA.ok("push");
    await turn(onB, "same", "1", () => onB.write({ "f.txt": "B\n" }));
    const main = a.git(remote, "rev-parse", "main");
    pushAfterTurn(onB, { remote: "origin" });
    cliTurn(onB, "fresh", "1", () => onB.write({ "g.txt": "B\n" }));
    const sessionRefs = () => ghostRefs(a, remote).filter((ref) => ref.includes("/sessions/"));
    await until(() => sessionRefs().length === 2);
    const fresh = (await logIn(onB, "fresh"))[0].after;
    expect(ghostRefs(a, remote)).toContain(`refs/ghostcommit/root/snapshots/${fresh}`);
    // B's own "same" stays off the remote: A's history under that id is untouched.
    const bSame = (await logIn(onB, "same"))[0].after;
    expect(ghostRefs(a, remote)).not.toContain(`refs/ghostcommit/root/snapshots/${bSame}`);
    let problems: any[] = [];
    await until(async () => {
      problems = (await doctorIn(onB)).problems ?? [];
      return problems.length > 0;
    });
    expect(problems).toHaveLength(1);
    expect(problems[0].code).toBe("push-failed");
    expect(problems[0].message).toMatch(
      /holds a different history under the same session id: same \(pushed from .+\); it was left out, the other sessions sent/,
    );
    expect(problems[0].message).toContain("Each later background push leaves it out too");
    expect(problems[0].message).not.toContain("to retry");
    expect(a.git(remote, "rev-parse", "main")).toBe(main);
  });

  it("refused for an ignored file the agent touched, doctor gives the ways that get past it", async () => {
    const remote = bare("auto-secret.git");
    const repo = originRepo(a, "auto-secret", remote, { ".gitignore": ".env\n", "app.ts": "1\n" });
    const config = (extra: object) => pushAfterTurn(repo, { remote: "origin", ...extra });
    config({});
    const pushProblems = async (done: (problems: any[]) => boolean) => {
      let problems: any[] = [];
      await until(async () => {
        problems = (await doctorIn(repo)).problems ?? [];
        return done(problems);
      });
      return problems;
    };
    // A pre-edit hook's touch makes the .env the agent edits rewindable, so the session's
    // snapshots hold it from then on: pushing again as is can never succeed.
    repo.ok("turn", "begin", "--session", "s", "--turn", "1");
    repo.ok("touch", "--session", "s", ".env");
    repo.write({ ".env": "TOKEN=hunter2\n", "app.ts": "2\n" });
    repo.ok("turn", "end", "--session", "s");
    const [refused] = await pushProblems((p) => p.length > 0);
    expect(refused.code).toBe("push-failed");
    expect(refused.message).toContain(
      "snapshots hold 1 file the repository or a .ghostignore ignores (.env)",
    );
    // Recorded as doctor's own advice names things: the command line's flags, not the library's options.
    expect(refused.message).toContain("nothing was sent, --include-ignored sends them");
    expect(refused.message).not.toContain("push({");
    expect(refused.message).toContain("`ghostcommit push origin --include-ignored` sends what is there now");
    expect(refused.message).toContain('`"includeIgnored": true` in the config');
    expect(refused.message).not.toContain("to retry");
    expect(ghostRefs(a, remote)).toEqual([]);

    // Opted in, the next turn's push sends them, and the problem is gone.
    config({ includeIgnored: true });
    cliTurn(repo, "s", "2", () => repo.write({ "app.ts": "3\n" }));
    await pushProblems((p) => p.length === 0);
    const last = (await logIn(repo, "s")).at(-1).after;
    expect(a.git(remote, "cat-file", "-p", `${last}:.env`)).toBe("TOKEN=hunter2\n");

    config({ includeIgnored: "yes" });
    const bad = repo.cli(["doctor", "--json"]);
    expect(bad.stderr + JSON.stringify(bad.json)).toContain('"includeIgnored": false}');
    // The key that is wrong, with what it holds.
    expect(bad.stderr).toContain('its "includeIgnored" is "yes", not true or false');
    config({ after: "sometimes" });
    expect(repo.cli(["doctor"]).stderr).toContain('its "after" is "sometimes", not "turn" or "never"');
    config({ afterr: "turn" });
    expect(repo.cli(["doctor"]).stderr).toContain('its "afterr" is not a setting');
  });
});

describe("push after each turn, from the command line", () => {
  it("the push's process starts beside the turn's status and goes on once the command has ended", async () => {
    const remote = bare("waiting.git");
    const repo = originRepo(a, "waiting", remote, { "f.txt": "0\n" });
    pushAfterTurn(repo, { remote: "origin" });
    repo.ok("turn", "begin", "--session", "w", "--turn", "1");
    repo.write({ "f.txt": "1\n" });
    const end = repo.sandbox.cli(repo.dir, ["turn", "end", "--session", "w", "--turn", "1"], undefined, {
      GHOSTCOMMIT_TRACE: "1",
    });
    expect(end.status, end.stderr).toBe(0);
    expect(end.stderr).toContain("push: its process waits for this command's end");
    await until(() => ghostRefs(a, remote).some((ref) => ref.includes("/sessions/")));
    // The go-ahead the turn's end wrote was taken by the process it let go.
    const store = path.join(a.home, "data", "workspaces");
    const leftovers = readdirSync(store, { recursive: true }).filter((name) =>
      String(name).includes("push-go"),
    );
    expect(leftovers).toEqual([]);
    expect((await doctorIn(repo)).problems).toEqual([]);
  });
});

describe("push and fetch over git daemon on 127.0.0.1", () => {
  it("carries a session through the git:// network transport", async () => {
    const remote = bare("net.git");
    const daemon = await gitDaemon(a, remote.replace(/\/net\.git$/, ""));
    const url = `${daemon.url}/net.git`;
    const { repo: onA, turns } = await recordOnA("n1", url, false);
    expect(onA.ok("push", url).refs).toBeGreaterThan(1);
    const plain = cloneOf(b, url, "nplain");
    expect(ghostRefs(b, plain.dir)).toEqual([]);
    const onB = cloneOf(b, url, "n2");
    expect(onB.ok("fetch", "origin").sessions.map((s: any) => s.session)).toEqual(["s1"]);
    expect(await logIn(onB, "s1")).toEqual(turns);
    onB.ok("restore", turns[0].after);
    onB.ok("rewind", "--session", "s1", "--to", "t1");
    expect(onB.read("README.md")).toBe("hi\n");
    daemon.stop();
  });
});
