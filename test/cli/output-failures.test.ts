import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLI, type Repo } from "../helpers/repo.js";
import { fileSandbox } from "../helpers/support.js";

const { repo } = fileSandbox();

/** The CLI with its stdout on a full disk. */
function toFullDisk(r: Repo, args: string[]): { status: number | null; stderr: string } {
  const full = openSync("/dev/full", "w");
  try {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      cwd: r.dir,
      env: r.sandbox.env,
      stdio: ["ignore", full, "pipe"],
      encoding: "utf8",
    });
    return { status: result.status, stderr: result.stderr };
  } finally {
    closeSync(full);
  }
}

describe.runIf(existsSync("/dev/full"))("output that cannot be written", () => {
  it("fails with a message, not a stack trace, and what the command did stands", () => {
    const r = repo({ "a.txt": "a\n" });
    const snap = r.ok("snapshot");
    const message = "ghostcommit: cannot write output: no space left on the device (ENOSPC)\n";
    for (const args of [["list"], ["--json", "list"]]) {
      expect(toFullDisk(r, args), args.join(" ")).toEqual({ status: 1, stderr: message });
    }
    r.write({ "a.txt": "changed\n" });
    expect(toFullDisk(r, ["restore", snap.id, "--json"])).toEqual({ status: 1, stderr: message });
    expect(r.read("a.txt")).toBe("a\n");
    expect(r.ok("list")[0].message).toBe(`before restoring ${snap.id.slice(0, 12)}`);
  });
});

/** The CLI writing into a pipe whose reader has closed it; the CLI's exit status. */
function toClosedPipe(r: Repo, args: string[], streams = ""): number {
  const command = `"$0" "$@" ${streams} | (exec 0<&-; sleep 1); exit \${PIPESTATUS[0]}`;
  return spawnSync("bash", ["-c", command, process.execPath, CLI, ...args], {
    cwd: r.dir,
    env: r.sandbox.env,
  }).status as number;
}

describe("a reader that closed the pipe", () => {
  it("ends the output quietly and leaves the command's exit status as it is", () => {
    const r = repo({ "a.txt": "a\n" });
    r.ok("turn", "begin", "--session", "s", "--turn", "1");
    r.write({ "a.txt": "turn\n" });
    r.ok("turn", "end", "--session", "s", "--turn", "1");
    r.write({ "a.txt": "edited by hand\n" });
    expect(toClosedPipe(r, ["--json", "rewind", "--to", "1"], "2>/dev/null")).toBe(3);
    expect(toClosedPipe(r, ["show", "zzzzzzz"], "2>&1")).toBe(1);
    expect(toClosedPipe(r, ["list"])).toBe(0);
    expect(r.read("a.txt")).toBe("edited by hand\n");
  });
});
