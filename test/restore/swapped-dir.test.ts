import { spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

const sandbox = new Sandbox();
afterAll(() => sandbox.cleanup());

/**
 * Another process (a dev server, a build, the agent's background shell) that keeps renaming
 * `d` away, putting a symlink to `outside` in its place for a moment, and putting `d` back,
 * until `stop` exists (or 30 s have passed: it never outlives a failed test). Resolves once it
 * runs; `stopped` ends it and resolves once it has.
 */
function swapper(ws: string, outside: string, stop: string): Promise<{ stopped: () => Promise<void> }> {
  const script = `
    const fs = require("node:fs");
    const [ws, out, stop] = process.argv.slice(1);
    const d = ws + "/d", away = ws + "/d.away";
    const end = Date.now() + 30000;
    process.stdout.write("swapping\\n");
    while (!fs.existsSync(stop) && Date.now() < end) {
      try {
        fs.renameSync(d, away);
        fs.symlinkSync(out, d);
        fs.unlinkSync(d);
        fs.renameSync(away, d);
      } catch {}
    }`;
  const child = spawn(process.execPath, ["-e", script, ws, outside, stop], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stopped = () => {
    writeFileSync(stop, "");
    return exited;
  };
  return new Promise((resolve) => child.stdout.once("data", () => resolve({ stopped })));
}

/** Every file below `dir` (the repository's .git left out). */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .filter((rel) => !rel.startsWith(".git/"));
}

describe("a directory another process swaps for a symlink while a restore writes in it", () => {
  it.skipIf(process.platform !== "linux")(
    "is never written through: nothing lands outside the workspace, no temp file stays",
    async () => {
      const files = (text: string) =>
        Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`d/f${i}`, `${text}${i}\n`]));
      const r = sandbox.repo("ws", files("orig"));
      const outside = sandbox.dir("outside");
      const before = r.ok("snapshot").id;
      // A few rounds: the swaps are timed by the system, so any one round may miss the writes.
      for (let round = 0; round < 4; round++) {
        r.write(files(`agent${round}-`));
        const stop = path.join(sandbox.home, `stop${round}`);
        const { stopped } = await swapper(r.dir, outside, stop);
        let restored: ReturnType<typeof r.cli>;
        try {
          restored = r.cli(["restore", before, "--json"]);
        } finally {
          await stopped();
        }

        expect(readdirSync(outside)).toEqual([]);
        expect(filesBelow(r.dir).filter((rel) => /\.gc-[0-9a-f]+-\d+~$/.test(rel))).toEqual([]);
        // Whatever the swaps made it skip, the restore said so, and running it again finishes it.
        expect([0, 1]).toContain(restored.status);
        // A swap that found d made anew by the restore leaves the old one beside it: put aside.
        r.remove("d.away");
        r.ok("restore", before);
        expect([r.read("d/f0"), r.read("d/f499")]).toEqual(["orig0\n", "orig499\n"]);
      }
    },
  );
});

describe("a directory another process removes while a restore deletes in it", () => {
  it.skipIf(process.platform !== "linux")(
    "leaves what was to go gone, with nothing reported as failed",
    () => {
      const r = sandbox.repo("gone", { "a.txt": "a\n" });
      const before = r.ok("snapshot").id;
      r.write({ "dz/new1": "1\n", "dz/new2": "2\n" });
      // The other process's removal, at the one moment that matters: right after the restore has
      // opened dz's parent and looks for dz in it (a real removal, loaded into the CLI's process).
      const remover = path.join(sandbox.home, "remove-dz.cjs");
      writeFileSync(
        remover,
        `const fs = require("node:fs");
         const lstat = fs.lstatSync;
         let done = false;
         fs.lstatSync = function (p, ...rest) {
           const s = Buffer.isBuffer(p) ? p.toString("latin1") : String(p);
           if (!done && s.startsWith("/proc/self/fd/") && s.endsWith("/dz")) {
             done = true;
             fs.rmSync(${JSON.stringify(r.path("dz"))}, { recursive: true });
           }
           return lstat.call(this, p, ...rest);
         };`,
      );
      const restored = sandbox.cli(r.dir, ["restore", before, "--json"], undefined, {
        NODE_OPTIONS: `--require ${remover}`,
      });
      // Before, the deletions below the vanished directory failed as "io" (exit 1).
      expect([restored.status, restored.stderr]).toEqual([0, ""]);
      expect(restored.json.skipped).toEqual([]);
      expect(restored.json.deleted).toEqual(["dz/new1", "dz/new2"]);
      expect([r.exists("dz"), r.read("a.txt")]).toEqual([false, "a\n"]);
    },
  );
});
