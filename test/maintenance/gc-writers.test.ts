import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BatchingObjectWriter } from "../../src/git/batched-objects.js";
import { collectGarbage } from "../../src/maintenance/gc.js";
import { StoreContext } from "../../src/store/context.js";
import { Sandbox } from "../helpers/repo.js";
import { snapshotIn } from "../session/support.js";

// gc waits (a minute in use) for object writers that began before it. One that outlives the wait
// may have written a pack no ref names yet: gc then packs around it, and those objects must
// survive, whatever the snapshots gc expires.
describe("gc with a writer still running", () => {
  it("keeps the objects a running writer packed but has not referenced yet", async () => {
    const sandbox = new Sandbox();
    try {
      const repo = sandbox.repo("repo", { "a.txt": "a\n" });
      for (let i = 0; i < 3; i++) {
        repo.write({ "a.txt": `version ${i}\n` });
        await snapshotIn(repo);
      }
      sandbox.applyToProcess();
      const engine = await StoreContext.open(repo.dir);
      const has = (oid: string) => {
        try {
          execFileSync("git", ["cat-file", "-e", oid], {
            env: { ...sandbox.env, GIT_DIR: engine.paths.gitDir },
          });
          return true;
        } catch {
          return false;
        }
      };
      const ids: string[] = [];
      const outcome = await engine.writing(async () => {
        // A capture in flight: its 40 objects are one pack that no snapshot names yet.
        const writer = new BatchingObjectWriter(engine.paths.objectsDir, true);
        for (let i = 0; i < 40; i++) ids.push(await writer.write("blob", Buffer.from(`in flight ${i}\n`)));
        writer.flush();
        expect(ids.every(has)).toBe(true);
        // This process holds the writers' side: gc's wait runs out, and it packs around it.
        return collectGarbage(engine, { keep: 1 }, async () => ({ ids: new Set(), trees: [] }), 200);
      });
      expect(outcome.dropped).toHaveLength(2);
      expect(ids.filter((id) => !has(id))).toEqual([]);
      repo.ok("doctor");
      // With no writer left, the next gc frees them at once.
      await collectGarbage(engine, { keep: 1 }, async () => ({ ids: new Set(), trees: [] }), 200);
      expect(ids.filter(has)).toEqual([]);
    } finally {
      sandbox.cleanup();
    }
  });
});
