import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildProgram, runCli } from "../../src/cli/program.js";
import { Sandbox } from "../helpers/repo.js";

// The command-line program run in-process from its sources (no build): the same parsing, output
// and exit statuses as the installed bin, which test/cli/cli.test.ts drives as a subprocess.

let sandbox: Sandbox;
let out: string[];
let err: string[];
const writes = { stdout: process.stdout.write, stderr: process.stderr.write };

beforeEach(() => {
  sandbox = new Sandbox();
  sandbox.applyToProcess();
  out = [];
  err = [];
  process.stdout.write = ((chunk: string | Uint8Array) =>
    out.push(String(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) =>
    err.push(String(chunk)) > 0) as typeof process.stderr.write;
});

afterEach(() => {
  sandbox.cleanup();
  process.stdout.write = writes.stdout;
  process.stderr.write = writes.stderr;
  process.exitCode = undefined;
});

const run = (...args: string[]) => runCli([process.execPath, "ghostcommit", ...args]);

describe("the CLI program in-process", () => {
  it("takes a snapshot and prints one JSON document", async () => {
    const repo = sandbox.repo();
    repo.write({ "new.txt": "new\n" });
    expect(await run("-C", repo.dir, "snapshot", "--json")).toBe(0);
    const doc = JSON.parse(out.join(""));
    expect(doc.id).toMatch(/^[0-9a-f]{40}$/);
    expect(doc.fileCount).toBe(2);
  });

  it("a usage error exits 2 with a ghostcommit: message", async () => {
    const repo = sandbox.repo();
    expect(await run("-C", repo.dir, "restore")).toBe(2);
    expect(err.join("")).toMatch(/^ghostcommit: /);
  });

  it("a command refused for its arguments leaves no store behind", async () => {
    const repo = sandbox.repo();
    expect(await run("-C", repo.dir, "snapshot", "--include", "../elsewhere", "--json")).toBe(1);
    expect(JSON.parse(out.join("")).error.code).toBe("outside-workspace");
    const workspaces = path.join(sandbox.env.GHOSTCOMMIT_HOME!, "workspaces");
    expect(existsSync(workspaces) ? readdirSync(workspaces) : []).toEqual([]);
    // reading commands on a workspace with no store yet create none either
    expect(await run("-C", repo.dir, "list", "--json")).toBe(0);
    expect(await run("-C", repo.dir, "sessions", "--json")).toBe(0);
    expect(existsSync(workspaces) ? readdirSync(workspaces) : []).toEqual([]);
  });

  it("a file-system failure is reported as io with its path and code, not as an internal error", async () => {
    const repo = sandbox.repo();
    const notADir = path.join(sandbox.home, "data-is-a-file");
    writeFileSync(notADir, "");
    process.env.GHOSTCOMMIT_HOME = notADir;
    expect(await run("-C", repo.dir, "snapshot", "--json")).toBe(1);
    const doc = JSON.parse(out.join(""));
    expect(doc.error.code).toBe("io");
    expect(doc.error.message).toBe(
      `cannot create this workspace's store in ${notADir}: a part of the path is a file, not a directory (ENOTDIR)`,
    );
    expect(err.join("")).toMatch(/^ghostcommit: /);
    // doctor says so before any snapshot is attempted
    out.length = 0;
    expect(await run("-C", repo.dir, "doctor", "--json")).toBe(1);
    expect(JSON.parse(out.join("")).problems).toEqual([
      {
        code: "data-dir-unusable",
        message: `the data directory cannot hold a store: ${notADir} is a file, not a directory (GHOSTCOMMIT_HOME sets it)`,
      },
    ]);
  });

  it("sets up only the named command's module, and every command when none is named", async () => {
    const names = (...args: string[]) =>
      buildProgram([process.execPath, "ghostcommit", ...args]).commands.map((c) => c.name());
    const all = names("--help");
    expect(all).toEqual(
      expect.arrayContaining(["snapshot", "turn", "hook", "install", "push", "rewind", "redo", "ui"]),
    );
    for (const name of all) {
      const own = names("-C", sandbox.home, "--store", "shadow", name, "--json");
      expect(own, name).toContain(name);
      expect(own.length, name).toBeLessThan(all.length);
    }
    // An option's value is no command; help and unknown words get every command.
    expect(names("--store", "snapshot", "hook")).toEqual(["hook", "install", "uninstall", "mcp"]);
    expect(names("help", "snapshot")).toEqual(all);
    expect(names("snapshots")).toEqual(all);
    expect(await run("snapshots")).toBe(2);
    expect(err.join("")).toMatch(/^ghostcommit: unknown command 'snapshots'.*snapshot/s);
  });
});
