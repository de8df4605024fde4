import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliTurn, cloneOf, machines, originRepo } from "./remote-support.js";

const { a, b, bare } = machines();

/**
 * A preload that kills the CLI's process (SIGKILL, as `kill -9` does) at the first rename into a
 * file whose path matches `target`, before that rename happens; it leaves `marker` to say it did.
 */
function killAtRenameInto(target: RegExp, marker: string): string {
  const file = path.join(b.home, `kill-${path.basename(marker)}.cjs`);
  writeFileSync(
    file,
    `const fs = require("node:fs");
     const rename = fs.promises.rename;
     fs.promises.rename = function (from, to) {
       if (${target}.test(String(to))) {
         fs.writeFileSync(${JSON.stringify(marker)}, String(to));
         process.kill(process.pid, "SIGKILL");
       }
       return rename.call(this, from, to);
     };`,
  );
  return file;
}

describe("a fetch killed between writing a session's journal and its origin", () => {
  it("leaves the session listed with the remote it came from once a later fetch has run", () => {
    const remote = bare();
    const onA = originRepo(a, "a", remote, { "README.md": "hi\n" });
    cliTurn(onA, "s1", "t1", () => onA.write({ "README.md": "by the agent\n" }));
    onA.ok("push");

    // Either step first: killed before the journal's rename, and before the origins' rename.
    for (const [name, target] of [
      ["journal", /\/sessions\/[^/]+\.jsonl$/],
      ["origins", /\/remote-sessions\.json$/],
    ] as const) {
      const onB = cloneOf(b, remote, `b-${name}`);
      const marker = path.join(b.home, `killed-${name}`);
      const killed = b.cli(onB.dir, ["fetch", "--json"], undefined, {
        NODE_OPTIONS: `--require ${killAtRenameInto(target, marker)}`,
      });
      expect([killed.status, existsSync(marker)], `killed at the ${name}`).toEqual([-1, true]);

      const again = onB.cli(["fetch", "--json"]);
      expect(again.status, again.stderr).toBe(0);
      const listed = onB.ok("sessions");
      expect(listed, `killed at the ${name}`).toMatchObject([
        { session: "s1", turns: 1, origin: { remote: `file://${remote}` } },
      ]);
      expect(typeof listed[0].origin.host).toBe("string");
    }
  });
});
