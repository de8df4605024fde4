import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliTurn, cloneOf, ghostRefs, machines, originRepo } from "./remote-support.js";

const { a, b, bare } = machines();

/** A program for the remote's side that notes how it was run in `log`, then runs git's own. */
function wrapper(dir: string, name: string, log: string): string {
  const file = path.join(dir, `${name}.sh`);
  writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${log}'\nexec git-${name} "$@"\n`, { mode: 0o755 });
  return file;
}

describe("a remote's own settings in the repository's config", () => {
  it("push goes to its pushurl through its receivepack; fetch runs its uploadpack", () => {
    const remote = bare();
    const decoy = bare("decoy.git"); // the fetch URL: nothing is pushed there
    const onA = originRepo(a, "a", remote, { "README.md": "hi\n" });
    const log = path.join(a.home, "programs.log");
    onA.git("remote", "set-url", "origin", decoy);
    onA.git("remote", "set-url", "--push", "origin", remote);
    onA.git("config", "remote.origin.receivepack", wrapper(a.home, "receive-pack", log));
    onA.git("config", "remote.origin.uploadpack", wrapper(a.home, "upload-pack", log));
    cliTurn(onA, "s1", "t1", () => onA.write({ "README.md": "by the agent\n" }));

    const pushed = onA.ok("push");
    expect([pushed.url, pushed.sessions.length]).toEqual([remote, 1]);
    expect(ghostRefs(a, remote).length).toBeGreaterThan(0);
    expect(ghostRefs(a, decoy)).toEqual([]);
    const ran = readFileSync(log, "utf8");
    // The push itself through the remote's receive-pack; the look at its refs before, its upload-pack.
    expect(ran).toContain(`receive-pack ${remote}`);
    expect(ran).toContain(`upload-pack ${remote}`);

    const onB = cloneOf(b, remote, "b");
    const fetchLog = path.join(b.home, "programs.log");
    onB.git("config", "remote.origin.uploadpack", wrapper(b.home, "upload-pack", fetchLog));
    expect(onB.ok("fetch").sessions).toEqual([{ session: "s1", turns: 1, status: "created" }]);
    expect(readFileSync(fetchLog, "utf8")).toContain(`upload-pack ${remote}`);
  });
});
