import { rmSync, symlinkSync, unlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DiffCache } from "../../src/ui/timeline.js";
import { libTurn, openIn, sessionSandbox } from "../session/support.js";

const { sandbox, repo } = sessionSandbox();

describe("the page's diff of a turn", () => {
  it("gives each file its own lines and counts, also after a type change and names git quotes", async () => {
    const r = repo({ "a-link": "was a file\n", "b.txt": "one\ntwo\n", 'é "q".txt': "x\n" });
    const ws = await openIn(sandbox, r.dir);
    const ended = await libTurn(ws, "s", "1", () => {
      unlinkSync(r.path("a-link"));
      symlinkSync("b.txt", r.path("a-link"));
      r.write({ "b.txt": "one\n2\nthree\n", 'é "q".txt': "y\n", "z.bin": Buffer.from([0, 1, 0, 2]) });
    });
    const { files } = await new DiffCache(ws).view((await ws.session("s").log())[0].before, ended.after);
    const summary = files.map((f) => [f.path, f.status, f.added, f.removed, f.binary]);
    expect(summary).toEqual([
      ["a-link", "type-changed", 1, 1, false],
      ["b.txt", "modified", 2, 1, false],
      ["z.bin", "added", 0, 0, true],
      ['é "q".txt', "modified", 1, 1, false],
    ]);
    const b = files[1].hunks.flatMap((h) => h.lines);
    expect(b).toEqual([
      [" ", 1, 1, "one"],
      ["-", 2, null, "two"],
      ["+", null, 2, "2"],
      ["+", null, 3, "three"],
    ]);
  });

  it("keeps each file's lines under its own name while an open turn's agent adds and removes files", async () => {
    const r = repo({ "m.txt": "m0\n" });
    const ws = await openIn(sandbox, r.dir);
    const { before } = await ws.session("s").beginTurn("1");
    r.write({ "m.txt": "m1\n" });
    // The agent writes between any two captures of the working tree (each runs under the store's
    // write lock, taken here one at a time): a.txt sorts before m.txt, so a diff and a patch of
    // different captures would pair m.txt with a.txt's lines.
    const engine = ws.engine;
    const writing = engine.writing.bind(engine);
    let queue: Promise<unknown> = Promise.resolve();
    let n = 0;
    engine.writing = (work) => {
      const run = queue.then(() => writing(work));
      queue = run
        .catch(() => {})
        .then(() => {
          if (n++ % 2 === 0) r.write({ "a.txt": "the agent's new file\n" });
          else rmSync(r.path("a.txt"));
        });
      return run;
    };
    const { files } = await new DiffCache(ws).view(before, null);
    const lines = files.map((f) => [f.path, f.hunks.flatMap((h) => h.lines.map((l) => l[0] + l[3]))]);
    expect(lines).toEqual([["m.txt", ["-m0", "+m1"]]]);
  });
});
