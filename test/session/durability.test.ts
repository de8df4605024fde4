import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { StoreContext } from "../../src/store/context.js";
import { maybeRunRetention, protectedSnapshots } from "../../src/maintenance/retention.js";
import type { StoredSnapshot } from "../../src/store/store.js";
import { CLI } from "../helpers/repo.js";
import { openIn, sessionSandbox, turn } from "./support.js";
import { listIn, logIn } from "../helpers/in-process.js";

const { sandbox, repo } = sessionSandbox();

function journals(): string[] {
  const root = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
  return readdirSync(root).flatMap((ws) =>
    readdirSync(path.join(root, ws, "sessions"))
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => path.join(root, ws, "sessions", f)),
  );
}

function killAfter(cwd: string, args: string[], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: sandbox.env, stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe("the journal survives crashes", () => {
  it("still loads after a killed turn end and a torn last record, and the session carries on", async () => {
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }));
    r.ok("turn", "begin", "--session", "s", "--turn", "2");
    r.write({ "f.txt": "2\n" });
    await killAfter(r.dir, ["turn", "end", "--session", "s", "--turn", "2"], 150);
    const [file] = journals();
    appendFileSync(file, '{"e":"end","turn":"2","after":"dead'); // a writer killed mid-record
    const log = await logIn(r, "s");
    expect(log.map((t: any) => t.turn)).toEqual(["1", "2"]);
    expect(r.ok("turn", "end", "--session", "s", "--turn", "2").changed).toEqual(["f.txt"]);
    await turn(r, "s", "3", () => r.write({ "f.txt": "3\n" }));
    expect(r.ok("log").map((t: any) => t.state)).toEqual(["done", "done", "done"]);
    expect(r.ok("rewind", "--to", "2").written).toEqual(["f.txt"]);
    expect(r.read("f.txt")).toBe("1\n");
  });
});

describe("retention", () => {
  it("expires old snapshots by hand but keeps the newest turn of an active session and the latest safety", async () => {
    const r = repo({ "f.txt": "0\n", ".ghostcommit.json": '{"retentionDays": 0}\n' });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }));
    await turn(r, "s", "2", () => r.write({ "f.txt": "2\n" }));
    const safety = r.ok("rewind", "--to", "2").safety;
    const byTurn = (n: string) =>
      r
        .ok("list")
        .filter((s: any) => s.turn === n)
        .map((s: any) => s.id);
    const [turn1, turn2] = [byTurn("1"), byTurn("2")];
    const report = r.ok("gc");
    expect(report.dropped.sort()).toEqual(turn1.sort());
    expect(report.kept.sort()).toEqual([...turn2, safety].sort());
    expect(report.bytesBefore).toBeGreaterThan(0);
    expect(r.cli(["rewind", "--to", "1", "--force", "--json"]).json.error.code).toBe("not-found");
    expect(r.ok("redo").restoredTurns).toEqual(["2"]); // the latest safety snapshot survived
  });

  it("expires the oldest unprotected snapshots past the size cap", async () => {
    const r = repo({ "f.txt": "0\n", ".ghostcommit.json": '{"maxStoreBytes": 1}\n' });
    // Content only this snapshot holds: dropping it frees something (a cap that would free
    // nothing drops nothing, see borrowed-pack-identity.test.ts).
    r.write({ "draft.txt": "a draft no other snapshot holds\n" });
    const plain = r.ok("snapshot", "-m", "by hand").id;
    r.remove("draft.txt");
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }));
    const report = r.ok("gc");
    expect(report.dropped).toEqual([plain]);
    expect(report.kept).toHaveLength(2);
  });

  it("runs by itself at most once a day, after a turn ends, without making the agent wait", async () => {
    const r = repo({ "f.txt": "0\n", ".ghostcommit.json": '{"retentionDays": 0}\n' });
    const old = r.ok("snapshot", "-m", "old").id;
    sandbox.applyToProcess();
    const engine = await StoreContext.open(r.dir);
    expect(await maybeRunRetention(engine)).toBe("skipped"); // a new store starts the clock
    expect(await maybeRunRetention(engine)).toBe("skipped");
    writeFileSync(
      path.join(engine.paths.dir, "retention.json"),
      JSON.stringify({ lastRun: Date.now() - 2 * 864e5 }),
    );
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.write({ "f.txt": "1\n" });
    // From the command line, the retention's process started beside the turn's status and waited.
    const end = r.sandbox.cli(r.dir, ["turn", "end", "--session", "s"], undefined, {
      GHOSTCOMMIT_TRACE: "1",
    });
    expect(end.status, end.stderr).toBe(0);
    expect(end.stderr).toContain("retention: its process waits for this command's end");
    let ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      ids = (await listIn(r)).map((s: any) => s.id);
      if (!ids.includes(old)) break;
      await new Promise((done) => setTimeout(done, 200));
    }
    expect(ids).not.toContain(old);
    expect(ids).toHaveLength(2); // the newest turn's before and after
    expect(await maybeRunRetention(engine)).toBe("skipped");
    expect(readdirSync(engine.paths.dir).filter((name) => name.startsWith("gc-go"))).toEqual([]);
  });

  it("packs a store of many loose objects before its day is out, at most every ten minutes", async () => {
    // Found in a trial: a long day of turns (marks and snapshots of a few objects each, a block of
    // 4 KiB apiece) grew the store 18 times the content it held until the daily gc packed it.
    const r = repo({ "f.txt": "0\n" });
    await turn(r, "s", "1", () => r.write({ "f.txt": "1\n" }));
    const store = r.ok("doctor").store as string;
    const gitDir = path.join(store, "git");
    const loose = () => {
      const counted = spawnSync("git", ["count-objects"], { env: { ...r.sandbox.env, GIT_DIR: gitDir } });
      return Number(/^(\d+) objects/.exec(counted.stdout.toString())?.[1]);
    };
    // 3,000 small objects of the store's own, loose (unreachable: what a gc frees).
    const files = path.join(r.sandbox.home, "loose-inputs");
    mkdirSync(files, { recursive: true });
    for (let i = 0; i < 3000; i++) writeFileSync(path.join(files, String(i)), `loose ${i}\n`);
    const paths = Array.from({ length: 3000 }, (_, i) => path.join(files, String(i))).join("\n");
    const hashAll = () =>
      spawnSync("git", ["hash-object", "-w", "--stdin-paths"], {
        env: { ...r.sandbox.env, GIT_DIR: gitDir },
        input: paths,
      }).status;
    expect(hashAll()).toBe(0);
    expect(loose()).toBeGreaterThan(3000);
    // The daily run was 11 minutes ago: not due by the day, due by the loose objects.
    const stamp = path.join(store, "retention.json");
    writeFileSync(stamp, JSON.stringify({ lastRun: Date.now() - 11 * 60_000 }));
    await turn(r, "s", "2", () => r.write({ "f.txt": "2\n" }));
    for (let i = 0; i < 100 && loose() > 1000; i++) await new Promise((done) => setTimeout(done, 200));
    expect(loose()).toBeLessThan(1000);
    expect(JSON.parse(readFileSync(stamp, "utf8")).lastRun).toBeGreaterThan(Date.now() - 60_000);
    // Many again at once: not before ten minutes have passed since.
    expect(hashAll()).toBe(0);
    r.ok("snapshot");
    await new Promise((done) => setTimeout(done, 1000));
    expect(loose()).toBeGreaterThan(3000);
    expect((await logIn(r, "s")).map((t: any) => t.state)).toEqual(["done", "done"]);
  });

  it("logs a background gc that failed, so doctor says so instead of the store only growing", async () => {
    const r = repo({ "f.txt": "0\n" });
    // A snapshot's commit that a failing disk damaged: every repack reads it, and fails.
    const commit = r.ok("snapshot").id as string;
    const store = r.ok("doctor").store as string;
    const file = path.join(store, "git", "objects", commit.slice(0, 2), commit.slice(2));
    const bytes = readFileSync(file);
    bytes.fill(0x55, 4, bytes.length - 2);
    chmodSync(file, 0o600);
    writeFileSync(file, bytes);
    writeFileSync(path.join(store, "retention.json"), JSON.stringify({ lastRun: Date.now() - 2 * 864e5 }));
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.write({ "f.txt": "1\n" });
    r.ok("turn", "end", "--session", "s");
    let said = "";
    for (let i = 0; i < 100 && !said; i++) {
      await new Promise((done) => setTimeout(done, 200));
      const problems: { code: string; message: string }[] = r.cli(["doctor", "--json"]).json.problems;
      said = problems.find((p) => p.code === "hook-errors")?.message ?? "";
    }
    expect(said).toContain("the background gc after a turn failed: ");
  });

  it("protects only the newest turn of sessions active in the last day", async () => {
    const r = repo();
    const engine = await openIn(sandbox, r.dir).then((ws) => ws.engine);
    const now = Date.now() * 1000;
    const snap = (id: string, session: string, turnId: string, ageDays: number): StoredSnapshot => ({
      id,
      tree: "",
      meta: {
        v: 1,
        t: now - ageDays * 864e8,
        kind: "turn-after",
        message: "",
        parent: null,
        fileCount: 0,
        excluded: [],
        included: [],
        nonce: "",
        session,
        turn: turnId,
      },
    });
    const kept = await protectedSnapshots(engine, [
      snap("a2", "active", "2", 0.1),
      snap("a1", "active", "1", 0.2),
      snap("i9", "idle", "9", 3),
    ]);
    expect([...kept.ids]).toEqual(["a2"]);
  });
});
