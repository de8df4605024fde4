import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fingerprint, storeDir } from "../hardening/helpers.js";
import { CLI, type Repo, Sandbox } from "../helpers/repo.js";
import { type Call, killedAtCall, orderProblems, parseTrace, traceCli } from "./strace.js";
import { listIn, logIn, doctorIn, openIn, snapshotIn } from "../helpers/in-process.js";
import { codex } from "../integrations/events.js";
import { hook } from "../integrations/hook-helpers.js";

/**
 * A power cut cannot be simulated in a test, so the order of the system calls is checked
 * instead (what is flushed before what is renamed or deleted), under `strace -f -y`; and the
 * restoring process is killed after each of its renames and deletions in turn, each time
 * undone byte for byte by `restore <safety>`.
 */

const sb = new Sandbox();
afterAll(() => sb.cleanup());

const BASE: Record<string, string> = { "top.txt": "top v1\n" };
for (const d of ["a", "b", "c"]) for (let f = 0; f < 4; f++) BASE[`${d}/f${f}.txt`] = `${d}/${f} v1\n`;

/**
 * A repository at BASE, a snapshot of it, then edits, new files in a new directory, a deleted
 * file and directory, and a mode change.
 */
function edited(name: string, store: string[] = []): { repo: Repo; target: string } {
  const repo = sb.repo(name, BASE);
  const target = repo.ok("snapshot", ...store).id;
  repo.write({ "top.txt": "top v2\n", "a/f0.txt": "a/0 v2\n", "extra/one.txt": "1\n" });
  repo.remove("b/f3.txt");
  repo.write({ "b/f1.txt": "b/1 v2\n", "a/new.txt": "new\n", "extra/deep/two.txt": "2\n" });
  repo.remove("c");
  repo.chmod("a/f2.txt", 0o755);
  return { repo, target };
}

function checkOrder(calls: Call[], repo: Repo, safety: string, objectsDir: string, refFile: string) {
  const store = storeDir(sb, repo.dir);
  const { problems, counts } = orderProblems(calls, {
    workspace: repo.dir,
    objectsDir,
    refFile,
    journalDir: path.join(store, "tmp"),
  });
  expect(problems).toEqual([]);
  expect(counts.syncfs).toBeGreaterThan(0);
  return { counts, safety };
}

describe("crash-consistent restore (order of flushes under strace)", () => {
  it("shadow store: the way back is on disk before the first workspace change; each file is fsynced before its rename", () => {
    const { repo, target } = edited("shadow");
    const wanted = fingerprint(repo.dir);
    const traced = traceCli(
      repo.dir,
      ["restore", target, "--json"],
      sb.env,
      path.join(sb.home, "shadow.strace"),
    );
    expect(traced.status, traced.stderr).toBe(0);
    const report = JSON.parse(traced.stdout);
    const git = path.join(storeDir(sb, repo.dir), "git");
    const ref = path.join(git, "refs/ghostcommit/snapshots", report.safety);
    const { counts } = checkOrder(traced.calls, repo, report.safety, path.join(git, "objects"), ref);
    // Not vacuous: the restore rewrote and deleted files, all seen in the trace.
    expect(report.written.length).toBeGreaterThanOrEqual(8);
    expect(report.deleted.length).toBe(3);
    expect(counts.workspaceRenames).toBe(report.written.length);
    expect(counts.workspaceRemovals).toBeGreaterThanOrEqual(report.deleted.length + 2); // + extra/, extra/deep/
    expect(fingerprint(repo.dir)).not.toEqual(wanted);
    repo.ok("restore", report.safety);
    expect(fingerprint(repo.dir)).toEqual(wanted);
  });

  it("repo store: the ghost commit's objects are flushed before git writes its ref (fsynced), and the ref's directory after", () => {
    const { repo, target } = edited("repostore", ["--store", "repo"]);
    const traced = traceCli(
      repo.dir,
      ["restore", target, "--store", "repo", "--json"],
      sb.env,
      path.join(sb.home, "repo.strace"),
    );
    expect(traced.status, traced.stderr).toBe(0);
    const report = JSON.parse(traced.stdout);
    const refsRoot = path.join(repo.dir, ".git/refs/ghostcommit");
    const [key] = readdirSync(refsRoot);
    const ref = path.join(refsRoot, key, "snapshots", report.safety);
    const { counts } = checkOrder(
      traced.calls,
      repo,
      report.safety,
      path.join(repo.dir, ".git/objects"),
      ref,
    );
    expect(counts.workspaceRenames).toBe(report.written.length);
  });

  it("rewind and redo: the same order, and the journal records are fsynced", () => {
    const repo = sb.repo("session", BASE);
    repo.ok("turn", "begin", "--session", "s", "--turn", "1");
    repo.write({ "a/f0.txt": "turn\n", "a/made.txt": "made\n" });
    repo.remove("b/f1.txt");
    repo.ok("turn", "end", "--session", "s", "--turn", "1");
    const git = path.join(storeDir(sb, repo.dir), "git");
    for (const args of [
      ["rewind", "--session", "s", "--to", "1", "--json"],
      ["redo", "--session", "s", "--json"],
    ]) {
      const traced = traceCli(repo.dir, args, sb.env, path.join(sb.home, `${args[0]}.strace`));
      expect(traced.status, traced.stderr).toBe(0);
      const report = JSON.parse(traced.stdout);
      const ref = path.join(git, "refs/ghostcommit/snapshots", report.safety);
      const { counts } = checkOrder(traced.calls, repo, report.safety, path.join(git, "objects"), ref);
      expect(counts.workspaceRenames + counts.workspaceRemovals).toBeGreaterThanOrEqual(3);
      const journal = path.join(storeDir(sb, repo.dir), "sessions");
      const journalSync = traced.calls.filter((c) => c.name === "fsync" && c.paths[0]?.startsWith(journal));
      expect(journalSync.length, `${args[0]}: journal fsync`).toBeGreaterThan(0);
    }
    expect(repo.read("a/f0.txt")).toBe("turn\n");
  });

  it("turn end: the after snapshot is flushed before its ref, and the journal record is fsynced", () => {
    const repo = sb.repo("turnend", BASE);
    repo.ok("turn", "begin", "--session", "t", "--turn", "1");
    repo.write({ "a/f1.txt": "changed\n" });
    const traced = traceCli(
      repo.dir,
      ["turn", "end", "--session", "t", "--turn", "1", "--json"],
      sb.env,
      path.join(sb.home, "turn.strace"),
    );
    expect(traced.status, traced.stderr).toBe(0);
    const after = JSON.parse(traced.stdout).after;
    const store = storeDir(sb, repo.dir);
    const ref = path.join(store, "git/refs/ghostcommit/snapshots", after);
    const refRename = traced.calls.find((c) => c.name === "rename" && c.paths[1] === ref)!;
    expect(refRename).toBeDefined();
    const flush = traced.calls.find((c) => c.name === "syncfs" && c.ok);
    expect(flush && flush.end < refRename.start).toBe(true);
    const journal = traced.calls.find(
      (c) => c.name === "fsync" && c.paths[0]?.startsWith(path.join(store, "sessions")),
    );
    expect(journal && journal.end > refRename.end).toBe(true);
  });
});

describe("the checker itself", () => {
  it("reports a rename from an unflushed temp file and a directory never fsynced", () => {
    const ws = "/w";
    const trace = [
      '1 rename("/s/objects/ab/cdef0123456789abcdef0123456789abcdef01", "/s/objects/ab/cdef0123456789abcdef0123456789abcdef01") = 0',
      "1 syncfs(3</s>) = 0",
      "1 fsync(4</s/refs/x.lock>) = 0",
      '1 rename("/s/refs/x.lock", "/s/refs/x") = 0',
      "1 fsync(4</s/refs>) = 0",
      "1 fsync(5</s/tmp>) = 0",
      '1 rename("/w/d/.f.gc-0a1b2c3d4e-0~", "/w/d/f") = 0',
    ].join("\n");
    const { problems } = orderProblems(parseTrace(trace), {
      workspace: ws,
      objectsDir: "/s/objects",
      refFile: "/s/refs/x",
      journalDir: "/s/tmp",
    });
    expect(problems).toEqual([
      "temp file /w/d/.f.gc-0a1b2c3d4e-0~ was not fsynced before its rename to /w/d/f",
      "directory /w/d was not fsynced after its entries changed",
    ]);
  });
});

/** Every directory below `dir` (its `.git` aside): `fingerprint` sees files only. */
function dirsIn(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !(rel === "" && e.name === ".git"))
    .flatMap((e) => [`${rel}${e.name}/`, ...dirsIn(dir, `${rel}${e.name}/`)])
    .sort();
}

/** The most calls of `name` one thread made (strace counts injections per thread and per call). */
function mostPerThread(calls: Call[], name: string): number {
  const counts = new Map<number, number>();
  for (const c of calls) if (c.name === name) counts.set(c.pid, (counts.get(c.pid) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

/** Runs the CLI under strace, killed at the n-th `call` of one thread (never, when there are fewer). */
function killedAt(repo: Repo, env: NodeJS.ProcessEnv, args: string[], call: string, n: number) {
  return killedAtCall([process.execPath, CLI, ...args], call, n, { cwd: repo.dir, env });
}

describe("killed at each of its renames and deletions", () => {
  it("a restore killed at any of them is undone byte for byte by restore <safety>", async () => {
    // The target has many changes; the state restored from is the commit itself, so the safety
    // snapshot writes almost no objects and the n-th rename is the n-th in the workspace or store.
    const repo = sb.repo("killed", BASE);
    repo.write({
      "top.txt": "top v2\n",
      "a/f0.txt": "a/0 v2\n",
      "b/f1.txt": "b/1 v2\n",
      "extra/one.txt": "1\n",
    });
    repo.write({ "extra/deep/two.txt": "2\n", "a/new.txt": "new\n" });
    repo.remove("c");
    const target = (await snapshotIn(repo)).id;
    repo.git("checkout", "-q", "--", ".");
    repo.remove("extra");
    repo.remove("a/new.txt");
    const before = fingerprint(repo.dir);
    const dirsBefore = dirsIn(repo.dir);
    // One libuv worker thread: the order of the calls, and so the n-th of each, is the same every run.
    const env = { ...sb.env, UV_THREADPOOL_SIZE: "1" };
    const full = traceCli(repo.dir, ["restore", target, "--json"], env, path.join(sb.home, "full.strace"));
    expect(full.status, full.stderr).toBe(0);
    const wanted = fingerprint(repo.dir);
    repo.ok("restore", JSON.parse(full.stdout).safety);
    let killedUntouched = 0;
    let killedMidway = 0;
    for (const call of ["rename", "unlink", "rmdir"]) {
      for (let n = 1; n <= mostPerThread(full.calls, call); n++) {
        const run = killedAt(repo, env, ["restore", target, "--json"], call, n);
        const now = fingerprint(repo.dir);
        if (run.signal !== "SIGKILL") {
          expect(run.status, run.stderr).toBe(0);
          expect(now).toEqual(wanted);
          repo.ok("restore", JSON.parse(run.stdout).safety);
        } else if (JSON.stringify([...now]) === JSON.stringify([...before])) {
          killedUntouched++;
        } else {
          killedMidway++;
          const safety = (await listIn(repo)).find((s: { kind: string }) => s.kind === "safety");
          repo.ok("restore", safety.id);
        }
        expect(fingerprint(repo.dir), `killed at ${call} ${n}`).toEqual(before);
        expect(dirsIn(repo.dir), `killed at ${call} ${n}`).toEqual(dirsBefore);
      }
    }
    expect(killedUntouched).toBeGreaterThan(0);
    expect(killedMidway).toBeGreaterThanOrEqual(5);
    const doctor = repo.cli(["doctor", "--repair", "--json"]);
    expect(doctor.json?.ok, doctor.stdout).toBe(true);
  }, 120_000);
});

describe("a rewind or redo killed half-way", () => {
  /** Runs the CLI under strace, killed at the n-th rename of one thread (never, when there are fewer). */

  it("is finished by running it again or undone by redo; a killed redo run again finishes it; doctor says how", async () => {
    const repo = sb.repo("killed-rewind", BASE);
    repo.ok("turn", "begin", "--session", "s", "--turn", "1");
    repo.write({ "a/f0.txt": "turn\n", "a/f1.txt": "turn\n", "b/f0.txt": "turn\n", "b/f2.txt": "turn\n" });
    repo.write({ "c/f0.txt": "turn\n", "c/f1.txt": "turn\n", "made/one.txt": "made\n" });
    repo.remove("top.txt");
    repo.ok("turn", "end", "--session", "s", "--turn", "1");
    const turnDone = fingerprint(repo.dir);
    const env = { ...sb.env, UV_THREADPOOL_SIZE: "1" };
    const rewind = ["rewind", "--session", "s", "--to", "1", "--json"];
    const full = traceCli(repo.dir, rewind, env, path.join(sb.home, "rewind-full.strace"));
    expect(full.status, full.stderr).toBe(0);
    const rewound = fingerprint(repo.dir);
    repo.ok("redo", "--session", "s");
    expect(fingerprint(repo.dir)).toEqual(turnDone);

    let finished = 0;
    let undone = 0;
    // From the last rename back: the workspace's renames come last (the store's come first), and
    // three kills among them show both ways on.
    for (let n = mostPerThread(full.calls, "rename"); n >= 1 && finished + undone < 3; n--) {
      const run = killedAt(repo, env, rewind, "rename", n);
      const now = fingerprint(repo.dir);
      const midway =
        run.signal === "SIGKILL" &&
        JSON.stringify([...now]) !== JSON.stringify([...turnDone]) &&
        JSON.stringify([...now]) !== JSON.stringify([...rewound]);
      if (run.signal !== "SIGKILL") expect(run.status, run.stderr).toBe(0);
      if (midway) {
        const doctor = repo.cli(["doctor", "--json"]);
        const problem = doctor.json.problems.find((p: { code: string }) => p.code === "interrupted-restore");
        expect(problem?.message).toContain("`ghostcommit rewind --session s --to 1` finishes it");
        expect(problem?.message).toContain("`ghostcommit redo --session s` puts back the files");
        // Another rewind would plan from a half-done state: refused, naming the two ways on.
        const other = repo.cli(["rewind", "--session", "s", "--to", "1", "a/f0.txt"]);
        expect(other.status).toBe(1);
        expect(other.stderr).toContain("the rewind of session s to turn 1 was interrupted");
        // The library's caller is told the library's calls, not the command line's.
        const viaLibrary = (await openIn(sb, repo.dir)).session("s").rewind({ to: "1", paths: ["a/f0.txt"] });
        await expect(viaLibrary).rejects.toThrow(
          'was interrupted: `session.rewind({ to: "1" })` finishes it, `session.redo()` puts back the files as before it',
        );
        if ((finished + undone) % 2 === 0) {
          const again = repo.ok(...rewind.slice(0, -1), "--json");
          expect(again.resumed).toBe(true);
          expect(fingerprint(repo.dir)).toEqual(rewound);
          finished++;
        } else {
          undone++;
        }
      }
      // However it ended, redo brings back the turn's work exactly (and settles doctor).
      if (run.signal !== "SIGKILL" || JSON.stringify([...now]) !== JSON.stringify([...turnDone]))
        repo.ok("redo", "--session", "s");
      expect(fingerprint(repo.dir), `rewind killed at rename ${n}`).toEqual(turnDone);
      expect((await logIn(repo, "s")).map((t: { state: string }) => t.state)).toEqual(["done"]);
    }
    expect(finished).toBeGreaterThan(0);
    expect(undone).toBeGreaterThan(0);

    // A killed redo, run again, finishes it.
    repo.ok(...rewind);
    const redo = ["redo", "--session", "s", "--json"];
    const fullRedo = traceCli(repo.dir, redo, env, path.join(sb.home, "redo-full.strace"));
    expect(fullRedo.status, fullRedo.stderr).toBe(0);
    let redoMidway = 0;
    for (let n = mostPerThread(fullRedo.calls, "rename"); n >= 1 && redoMidway < 2; n--) {
      repo.ok(...rewind);
      const run = killedAt(repo, env, redo, "rename", n);
      const now = fingerprint(repo.dir);
      if (run.signal === "SIGKILL" && JSON.stringify([...now]) !== JSON.stringify([...rewound])) {
        if (JSON.stringify([...now]) !== JSON.stringify([...turnDone])) {
          redoMidway++;
          // doctor says a redo was cut off, and that running it again finishes it.
          const problems = repo.cli(["doctor", "--json"]).json.problems as { message: string }[];
          expect(problems.map((p) => p.message.replace(/ started \S+/, ""))).toContainEqual(
            expect.stringMatching(
              /^a redo was interrupted; `ghostcommit redo --session s` finishes it \(until it runs, some files are back and others not\)/,
            ),
          );
        }
        repo.ok(...redo);
      } else if (run.signal !== "SIGKILL") {
        expect(run.status, run.stderr).toBe(0);
      } else {
        repo.ok(...redo);
      }
      expect(fingerprint(repo.dir), `redo killed at rename ${n}`).toEqual(turnDone);
    }
    expect(redoMidway).toBeGreaterThan(0);
    const repair = repo.cli(["doctor", "--repair", "--json"]);
    expect(repair.json?.ok, repair.stdout).toBe(true);
  }, 120_000);

  it("is still finished, or undone, after the agent's next prompt began a turn", async () => {
    for (const way of ["finish", "undo"]) {
      // A Codex session id names one conversation, fixed to the workspace of its first event.
      const session = `s-${way}`;
      const repo = sb.repo(`killed-rewind-next-turn-${way}`, BASE);
      repo.ok("turn", "begin", "--session", session, "--turn", "1");
      repo.write({ "a/f0.txt": "turn\n", "a/f1.txt": "turn\n", "b/f0.txt": "turn\n", "c/f1.txt": "turn\n" });
      repo.ok("turn", "end", "--session", session, "--turn", "1");
      const turnDone = JSON.stringify([...fingerprint(repo.dir)]);
      const env = { ...sb.env, UV_THREADPOOL_SIZE: "1" };
      const rewind = ["rewind", "--session", session, "--to", "1", "--json"];
      const full = traceCli(repo.dir, rewind, env, path.join(sb.home, `rewind-next-${way}.strace`));
      const rewound = JSON.stringify([...fingerprint(repo.dir)]);
      repo.ok("redo", "--session", session);
      // Killed between its first and last file: the files are half-way.
      let n = mostPerThread(full.calls, "rename");
      for (; n >= 1; n--) {
        const run = killedAt(repo, env, rewind, "rename", n);
        const now = JSON.stringify([...fingerprint(repo.dir)]);
        if (now !== turnDone && now !== rewound) break;
        // Rewound (or recorded as begun) before the kill: redo makes the next try start afresh.
        if (run.signal !== "SIGKILL" || now !== turnDone) repo.ok("redo", "--session", session);
      }
      expect(n, "no kill left the files half-way").toBeGreaterThan(0);
      // Said as half done, once, where a person or the model looks: not as a rewind that ran.
      expect(repo.ok("log", "--session", session)[0].rewindUnfinished).toBe(true);
      const problems = repo.cli(["doctor", "--json"]).json.problems as { code: string; message: string }[];
      const aboutIt = problems.filter((p) => p.message.includes(`rewind --session ${session} --to 1`));
      expect(aboutIt, JSON.stringify(problems)).toHaveLength(1);
      expect(aboutIt[0].message).toMatch(/^a rewind .*was interrupted/);
      expect(aboutIt[0].message).not.toContain("settles this");
      // The agent's next prompt (Codex's UserPromptSubmit, as developers.openai.com/codex/hooks
      // documents it) begins its turn; its answer tells the model the files are half-way.
      const prompt = codex(repo.dir, session, "UserPromptSubmit", { turn_id: "2", prompt: "go on" });
      const answer = hook(sb, "codex", prompt, repo.dir);
      expect(answer.status, answer.stderr).toBe(0);
      const told = JSON.parse(answer.stdout).hookSpecificOutput.additionalContext as string;
      // The last of the session's rewinds and redos since its last prompt (the test's own come first).
      const headings = told.split("\n").filter((line) => /^(Rewound|Redo|A rewind)/.test(line));
      expect(headings.at(-1), told).toMatch(
        /^A rewind of turn 1 was cut off before it finished: some of these files/,
      );
      if (way === "finish") {
        const finished = repo.ok(...rewind.slice(0, -1), "--json");
        expect(finished.resumed).toBe(true);
        // The whole rewind's outcome, the files the killed run had put back included.
        expect([...finished.written].sort()).toEqual(["a/f0.txt", "a/f1.txt", "b/f0.txt", "c/f1.txt"]);
        expect(JSON.stringify([...fingerprint(repo.dir)])).toBe(rewound);
      } else {
        repo.ok("redo", "--session", session);
        expect(JSON.stringify([...fingerprint(repo.dir)])).toBe(turnDone);
      }
      expect((await doctorIn(repo)).ok).toBe(true);
    }
  }, 120_000);
});
