import { chmodSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspace } from "../../src/index.js";
import { fileSandbox, workDigest } from "../helpers/support.js";

const { sandbox, repo } = fileSandbox();
sandbox.applyToProcess();

/** A small deterministic PRNG (mulberry32), so a failure names its seed and replays. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ["a", "b", "c d", "-e", "f.txt", "g\nh", "x.log"];

/** Random edits: new, changed, deleted files; exec bits; symlinks; a file becoming a directory and back. */
function mutate(root: string, rand: () => number, steps: number): void {
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)];
  for (let i = 0; i < steps; i++) {
    const depth = Math.floor(rand() * 3);
    const rel = Array.from({ length: depth + 1 }, () => pick(NAMES)).join("/");
    const full = path.join(root, rel);
    const parts = rel.split("/");
    try {
      switch (pick(["write", "write", "delete", "exec", "link", "dir"])) {
        case "write":
          for (let d = 1; d < parts.length; d++) {
            const dir = path.join(root, ...parts.slice(0, d));
            const stat = lstatSync(dir, { throwIfNoEntry: false });
            if (stat && !stat.isDirectory()) rmSync(dir, { force: true });
          }
          mkdirSync(path.dirname(full), { recursive: true });
          if (lstatSync(full, { throwIfNoEntry: false })?.isDirectory()) rmSync(full, { recursive: true });
          writeFileSync(full, `${rel} ${Math.floor(rand() * 1000)}\n`);
          break;
        case "delete":
          rmSync(full, { recursive: true, force: true });
          break;
        case "exec":
          if (lstatSync(full, { throwIfNoEntry: false })?.isFile())
            chmodSync(full, rand() < 0.5 ? 0o755 : 0o644);
          break;
        case "link":
          mkdirSync(path.dirname(full), { recursive: true });
          rmSync(full, { recursive: true, force: true });
          symlinkSync(pick(NAMES), full);
          break;
        case "dir":
          rmSync(full, { recursive: true, force: true });
          mkdirSync(full, { recursive: true });
          writeFileSync(path.join(full, "inside"), "inside\n");
          break;
      }
    } catch {
      // an edit that does not apply to the current shape (e.g. a symlinked parent): skip it
    }
  }
}

describe("random round trips", () => {
  it("restore brings back exactly the captured work tree after random edits, and its safety snapshot undoes it", async () => {
    // More seeds on demand: GC_SEEDS=200 npx vitest run test/core/roundtrip.test.ts
    const seeds = Number(process.env.GC_SEEDS ?? 12);
    for (let seed = 1; seed <= seeds; seed++) {
      const rand = prng(seed);
      const r = repo({});
      mutate(r.dir, rand, 12);
      r.git("add", "-A");
      r.git("commit", "-q", "--allow-empty", "-m", "base");
      mutate(r.dir, rand, 8);
      if (rand() < 0.5) r.git("add", "-A");
      mutate(r.dir, rand, 4);
      const ws = await openWorkspace({ cwd: r.dir });
      const wanted = workDigest(r.dir);
      const snap = await ws.snapshot();
      mutate(r.dir, rand, 10);
      const mutated = workDigest(r.dir);
      const report = await ws.restore(snap.id);
      expect(report.skipped, `seed ${seed}`).toEqual([]);
      expect(workDigest(r.dir), `seed ${seed}`).toEqual(wanted);
      const undo = await ws.restore(report.safety!);
      expect(undo.skipped, `seed ${seed}`).toEqual([]);
      expect(workDigest(r.dir), `seed ${seed} (undo)`).toEqual(mutated);
    }
  });

  it("in a subdirectory workspace with ignored files: only the captured set inside it changes", async () => {
    const seeds = Number(process.env.GC_SEEDS ?? 6); // the defaults include seeds that found bugs
    const captured = (digest: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(digest).filter(([p]) => !p.split("/").some((part) => part.endsWith(".log"))),
      );
    for (let seed = 106; seed < 106 + seeds; seed++) {
      const rand = prng(seed);
      const r = repo({ ".gitignore": "*.log\n", "outside.txt": "o\n" });
      const sub = r.path("w");
      mkdirSync(sub);
      mutate(sub, rand, 12);
      r.git("add", "-A");
      r.git("commit", "-q", "--allow-empty", "-m", "base");
      mutate(sub, rand, 8);
      const ws = await openWorkspace({ cwd: sub });
      const wanted = workDigest(sub);
      const snap = await ws.snapshot();
      mutate(sub, rand, 10);
      writeFileSync(r.path("outside.txt"), `changed ${seed}\n`);
      const mutated = workDigest(sub);
      const report = await ws.restore(snap.id);
      expect(
        report.skipped.filter((s) => s.reason !== "excluded"),
        `seed ${seed}`,
      ).toEqual([]);
      const after = workDigest(sub);
      // A path skipped as excluded (ignored content stands in its way) is left as it is.
      const skipped = report.skipped.map((s) => s.path);
      const comparable = (digest: Record<string, string>) =>
        Object.fromEntries(
          Object.entries(captured(digest)).filter(
            ([p]) => !skipped.some((s) => p === s || p.startsWith(`${s}/`)),
          ),
        );
      expect(comparable(after), `seed ${seed}`).toEqual(comparable(wanted));
      for (const [p, digest] of Object.entries(mutated)) {
        if (p.endsWith(".log") && after[p] !== undefined) expect(after[p], `seed ${seed} ${p}`).toBe(digest);
      }
      expect(r.read("outside.txt")).toBe(`changed ${seed}\n`);
    }
  });

  it("in a plain directory: restore and its undo are exact", async () => {
    const seeds = Number(process.env.GC_SEEDS ?? 6); // the defaults include seeds that found bugs
    for (let seed = 215; seed < 215 + seeds; seed++) {
      const rand = prng(seed);
      const dir = sandbox.dir(`plain-${seed}`);
      mutate(dir, rand, 14);
      const ws = await openWorkspace({ cwd: dir });
      const wanted = workDigest(dir);
      const snap = await ws.snapshot();
      mutate(dir, rand, 10);
      const mutated = workDigest(dir);
      const report = await ws.restore(snap.id);
      expect(report.skipped, `seed ${seed}`).toEqual([]);
      expect(workDigest(dir), `seed ${seed}`).toEqual(wanted);
      await ws.restore(report.safety!);
      expect(workDigest(dir), `seed ${seed} (undo)`).toEqual(mutated);
    }
  });
});
