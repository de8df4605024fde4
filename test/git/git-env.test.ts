import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileSandbox } from "../helpers/support.js";

const { repo, sandbox } = fileSandbox();
const realGit = path.join(
  (process.env.PATH ?? "").split(":").find((dir) => {
    try {
      readFileSync(path.join(dir, "git"));
      return true;
    } catch {
      return false;
    }
  }) ?? "/usr/bin",
  "git",
);

/**
 * The `GLIBC_TUNABLES` every git process of one snapshot started with, seen by a `git` earlier on
 * PATH that notes it and runs the real one.
 */
function tunablesGitSaw(userTunables: string | undefined): string[] {
  const r = repo({ "a.txt": "one\n" });
  const bin = sandbox.dir(`bin-${Math.random().toString(36).slice(2)}`);
  const seen = path.join(bin, "seen");
  writeFileSync(seen, "");
  writeFileSync(
    path.join(bin, "git"),
    `#!/bin/sh\nprintf '%s\\n' "\${GLIBC_TUNABLES-unset}" >> '${seen}'\nexec '${realGit}' "$@"\n`,
  );
  chmodSync(path.join(bin, "git"), 0o755);
  r.write({ "a.txt": "two\n", "b.txt": "new\n" });
  const env: NodeJS.ProcessEnv = { PATH: `${bin}:${process.env.PATH}` };
  if (userTunables !== undefined) env.GLIBC_TUNABLES = userTunables;
  const result = sandbox.cli(r.dir, ["snapshot", "--json"], undefined, env);
  expect(result.status, result.stderr).toBe(0);
  return [...new Set(readFileSync(seen, "utf8").split("\n").filter(Boolean))];
}

describe("git runs with glibc's huge-page allocator, unless the user said otherwise", () => {
  it("asks for transparent huge pages when the user set no tunables", () => {
    expect(tunablesGitSaw(undefined)).toEqual(["glibc.malloc.hugetlb=1"]);
  });

  it("keeps the user's own tunables and adds to them", () => {
    expect(tunablesGitSaw("glibc.malloc.arena_max=2")).toEqual([
      "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1",
    ]);
  });

  it("leaves a user's choice of huge pages as it is", () => {
    expect(tunablesGitSaw("glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2")).toEqual([
      "glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2",
    ]);
  });
});
