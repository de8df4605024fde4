import {
  appendFileSync,
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, type CliResult, type Repo, Sandbox } from "../helpers/repo.js";
import { claudeEvents } from "../integrations/events.js";
import { installedCommand, shellHook } from "../integrations/hook-helpers.js";

/**
 * The CLI runs from V8's code cache kept under the data home. Each test has its own data home and
 * watches the cache through the real CLI: GHOSTCOMMIT_TRACE names what became of the cache.
 */
const sandboxes: Sandbox[] = [];
afterAll(() => {
  for (const s of sandboxes) s.cleanup();
});

function fresh(): { sandbox: Sandbox; repo: Repo; dataHome: string; cacheDir: string } {
  const sandbox = new Sandbox();
  sandboxes.push(sandbox);
  const dataHome = sandbox.env.GHOSTCOMMIT_HOME!;
  // A new user's data home: without the cache the suite's sandboxes start with.
  rmSync(dataHome, { recursive: true, force: true });
  return { sandbox, repo: sandbox.repo(), dataHome, cacheDir: path.join(dataHome, "cache") };
}

interface Traced extends CliResult {
  /** What the loader did with the cache, in order ("accepted", "written (run 1 of 4)", ...). */
  cache: string[];
}

function traced(sandbox: Sandbox, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Traced {
  const result = sandbox.cli(cwd, args, undefined, { GHOSTCOMMIT_TRACE: "1", ...env });
  const cache = [...result.stderr.matchAll(/ cli: code cache (.+)$/gm)].map((m) => m[1]);
  return { ...result, cache };
}

/** The code caches in `dir` (beside them may be the plans of statuses started ahead). */
function codeCaches(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith("cli-"));
}

function onlyFile(dir: string): string {
  const names = codeCaches(dir);
  expect(names).toHaveLength(1);
  return path.join(dir, names[0]);
}

const mode = (file: string) => lstatSync(file).mode & 0o777;

/** Runs `list --json` until the cache has been written by every run that writes it. */
function settle(sandbox: Sandbox, repo: Repo): void {
  for (let run = 0; run < 4; run++) traced(sandbox, repo.dir, ["list", "--json"]);
  expect(traced(sandbox, repo.dir, ["list", "--json"]).cache).toEqual(["accepted"]);
}

describe("the code cache", () => {
  it("is written by the first successful runs, then only read; a 0600 file in a 0700 folder of the data home", () => {
    const { sandbox, repo, dataHome, cacheDir } = fresh();
    // It never creates the data home: nothing else has, so neither does the cache.
    const version = traced(sandbox, repo.dir, ["--version"]);
    expect(version.status).toBe(0);
    expect(version.cache).toEqual(["absent"]);
    expect(existsSync(dataHome)).toBe(false);
    const usage = traced(sandbox, repo.dir, ["snapshot", "--bogus"]);
    expect(usage.status).toBe(2);
    expect(existsSync(dataHome)).toBe(false);

    const first = traced(sandbox, repo.dir, ["snapshot", "--json"]);
    expect(first.status).toBe(0);
    expect(first.json.fileCount).toBe(1);
    expect(first.cache).toEqual(["absent", "written (run 1 of 4)"]);
    const file = onlyFile(cacheDir);
    // Named by the digest the build wrote into the loader, and the bundle's size and time.
    const bundle = readFileSync(path.join(path.dirname(CLI), "cli.cjs"));
    const digest = createHash("sha256").update(bundle).digest("hex").slice(0, 20);
    expect(path.basename(file)).toMatch(
      new RegExp(
        `^cli-${digest}-${bundle.length.toString(36)}-[0-9a-z]+-${process.version.replace(/\./g, "\\.")}-${process.arch}\\.v8$`,
      ),
    );
    expect(mode(cacheDir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);

    for (const run of [2, 3, 4]) {
      expect(traced(sandbox, repo.dir, ["list", "--json"]).cache).toEqual([
        "accepted",
        `written (run ${run} of 4)`,
      ]);
    }
    const written = readFileSync(file);
    const later = traced(sandbox, repo.dir, ["list", "--json"]);
    expect(later.cache).toEqual(["accepted"]);
    expect(later.json).toHaveLength(1);
    expect(readFileSync(file).equals(written)).toBe(true);

    // Same answers without it; turned off, it is neither read nor written.
    const off = traced(sandbox, repo.dir, ["list", "--json"], { GHOSTCOMMIT_NO_CODE_CACHE: "1" });
    expect(off.cache).toEqual([]);
    expect(off.json).toEqual(later.json);

    // Store listing, gc and doctor look at the stores only.
    expect(repo.ok("doctor").ok).toBe(true);
    expect(repo.ok("gc").dropped).toEqual([]);
    expect(readdirSync(path.join(dataHome, "workspaces"))).toHaveLength(1);
    expect(readFileSync(file).equals(written)).toBe(true);
  });

  it("garbage or a truncated cache is rejected by V8 and rewritten; the command runs as without one", () => {
    const { sandbox, repo, cacheDir } = fresh();
    repo.ok("snapshot");
    const file = onlyFile(cacheDir);
    const valid = readFileSync(file);
    for (const bad of [randomBytes(valid.length), valid.subarray(0, valid.length >> 1)]) {
      writeFileSync(file, bad);
      const run = traced(sandbox, repo.dir, ["list", "--json"]);
      expect(run.status).toBe(0);
      expect(run.json).toHaveLength(1);
      expect(run.cache).toEqual(["rejected", "written (run 1 of 4)"]);
      expect(traced(sandbox, repo.dir, ["list", "--json"]).cache[0]).toBe("accepted");
    }
  });

  it("a cache that anyone else could have written is never read, and is replaced by this user's own", () => {
    const { sandbox, repo, cacheDir } = fresh();
    repo.ok("snapshot");
    settle(sandbox, repo);
    const file = onlyFile(cacheDir);
    const valid = readFileSync(file);
    const rewrite = (prepare: () => void) => {
      writeFileSync(file, valid);
      chmodSync(file, 0o600);
      prepare();
      const run = traced(sandbox, repo.dir, ["list", "--json"]);
      expect(run.status).toBe(0);
      expect(run.json).toHaveLength(1);
      expect(run.cache).toEqual(["untrusted", "written (run 1 of 4)"]);
      expect(lstatSync(file).isFile()).toBe(true);
      expect(mode(file)).toBe(0o600);
      expect(lstatSync(file).uid).toBe(process.getuid!());
    };
    rewrite(() => chmodSync(file, 0o620)); // group-writable
    rewrite(() => chmodSync(file, 0o602)); // world-writable
    // A symbolic link is not followed, even to a valid cache of this user's.
    const elsewhere = path.join(sandbox.home, "elsewhere.v8");
    writeFileSync(elsewhere, valid, { mode: 0o600 });
    rewrite(() => {
      rmSync(file);
      symlinkSync(elsewhere, file);
    });
    expect(readFileSync(elsewhere).equals(valid)).toBe(true);
    if (process.getuid!() === 0) rewrite(() => chownSync(file, 65534, 65534)); // another user's

    // In a folder others can write to, the cache is neither read nor written.
    writeFileSync(file, valid);
    chmodSync(cacheDir, 0o777);
    const open = traced(sandbox, repo.dir, ["list", "--json"]);
    expect(open.status).toBe(0);
    expect(open.cache).toEqual(["untrusted"]);
    chmodSync(cacheDir, 0o700);
  });

  it("an agent's event from $HOME creates no store: the data home holds the hook log, the cache and what the session was told", () => {
    const { sandbox, dataHome } = fresh();
    const event = claudeEvents.prompt(sandbox.home, "h1", "hello");
    const answer = shellHook(sandbox, installedCommand("claude-code"), event, sandbox.home);
    expect(answer.status).toBe(0);
    expect(JSON.parse(answer.stdout).systemMessage).toContain("(home or root directory)");
    expect(readdirSync(dataHome).sort()).toEqual(["cache", "hook-sessions", "hooks.log"]);
  });

  it("an agent's hook events write a cache of their own, and leave the command line's as it was", () => {
    const { sandbox, repo, cacheDir } = fresh();
    repo.ok("snapshot");
    settle(sandbox, repo);
    const commands = onlyFile(cacheDir);
    const written = readFileSync(commands);
    // Claude Code's UserPromptSubmit, as the installed command runs it (GHOSTCOMMIT_TRACE says
    // what became of the cache).
    const prompt = (n: number) =>
      shellHook(
        sandbox,
        installedCommand("claude-code"),
        claudeEvents.prompt(repo.dir, `s${n}`, "go"),
        repo.dir,
        {
          GHOSTCOMMIT_TRACE: "1",
        },
      );
    const seen = [1, 2, 3, 4, 5].map((n) =>
      [...prompt(n).stderr.matchAll(/ cli: code cache (.+)$/gm)].map((m) => m[1]),
    );
    expect(seen).toEqual([
      ["absent", "written (run 1 of 4)"],
      ["accepted", "written (run 2 of 4)"],
      ["accepted", "written (run 3 of 4)"],
      ["accepted", "written (run 4 of 4)"],
      ["accepted"],
    ]);
    const hooks = codeCaches(cacheDir).filter((name) => name !== path.basename(commands));
    expect(hooks).toEqual([path.basename(commands).replace(/\.v8$/, "-hook.v8")]);
    expect(readFileSync(commands).equals(written)).toBe(true);
    expect(traced(sandbox, repo.dir, ["list", "--json"]).cache).toEqual(["accepted"]);
  });

  it("a cache that cannot be written costs the command nothing", () => {
    const { sandbox, repo, cacheDir } = fresh();
    repo.ok("snapshot");
    // A file where the folder should be.
    rmSync(cacheDir, { recursive: true });
    writeFileSync(cacheDir, "not a folder");
    const blocked = traced(sandbox, repo.dir, ["snapshot", "--json"]);
    expect(blocked.status).toBe(0);
    expect(blocked.json.fileCount).toBe(1);
    expect(blocked.cache).toEqual(["untrusted"]);
    expect(readFileSync(cacheDir, "utf8")).toBe("not a folder");
    // A folder this user cannot write to (permissions do not stop root).
    if (process.getuid!() !== 0) {
      rmSync(cacheDir);
      mkdirSync(cacheDir, { mode: 0o500 });
      const readOnly = traced(sandbox, repo.dir, ["snapshot", "--json"]);
      expect(readOnly.status).toBe(0);
      expect(readOnly.cache).toEqual(["absent"]);
      expect(readdirSync(cacheDir)).toEqual([]);
    }
  });

  it("a bundle patched in place to the same length is not run from the cache of the one it replaced", () => {
    const { sandbox, repo, cacheDir } = fresh();
    // An installed copy, as a package manager leaves it, whose bundle a patch tool then edits.
    const pkg = path.join(sandbox.home, "patched");
    cpSync(path.dirname(CLI), path.join(pkg, "dist"), { recursive: true });
    cpSync(path.join(path.dirname(CLI), "..", "package.json"), path.join(pkg, "package.json"));
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(pkg, "dist", "ghostcommit.cjs"), ...args], {
        cwd: repo.dir,
        env: { ...sandbox.env, GHOSTCOMMIT_TRACE: "1" },
        encoding: "utf8",
      });
    repo.ok("snapshot"); // the data home, where caches are written
    expect(run("list").stderr).toMatch(/code cache absent[\s\S]*code cache written \(run 1 of 4\)/);
    expect(run("--version").stderr).toMatch(/code cache accepted/);
    const bundle = path.join(pkg, "dist", "cli.cjs");
    const text = readFileSync(bundle, "utf8");
    const version = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).version as string;
    const patched = `9${version.slice(1)}`; // as long as the version it replaces
    expect(text).toContain(JSON.stringify(version));
    writeFileSync(bundle, text.replace(JSON.stringify(version), JSON.stringify(patched)));
    utimesSync(bundle, new Date(), new Date(Date.now() + 5000));
    const after = run("--version");
    expect(after.stdout).toBe(`${patched}\n`); // V8 would have taken the old code for it
    expect(after.stderr).toMatch(/code cache absent/);
    expect(codeCaches(cacheDir)).toHaveLength(3); // this checkout's, the copy's before and after
  });

  it("a new bundle gets its own cache, and only the newest few are kept", () => {
    const { sandbox, repo, cacheDir } = fresh();
    repo.ok("snapshot");
    const current = onlyFile(cacheDir);
    // An upgraded install: the same files with a changed bundle.
    const pkg = path.join(sandbox.home, "pkg");
    cpSync(path.dirname(CLI), path.join(pkg, "dist"), { recursive: true });
    cpSync(path.join(path.dirname(CLI), "..", "package.json"), path.join(pkg, "package.json"));
    appendFileSync(path.join(pkg, "dist", "cli.cjs"), "\n// upgraded\n");
    const old = [1, 2, 3, 4].map((n) =>
      path.join(cacheDir, `cli-${"0".repeat(31)}${n}-v0.0.${n}-${process.arch}.v8`),
    );
    for (const [n, file] of old.entries()) {
      writeFileSync(file, "old", { mode: 0o600 });
      utimesSync(file, 1000 + n, 1000 + n);
    }
    const upgraded = spawnSync(
      process.execPath,
      [path.join(pkg, "dist", "ghostcommit.cjs"), "list", "--json"],
      {
        cwd: repo.dir,
        env: { ...sandbox.env, GHOSTCOMMIT_TRACE: "1" },
        encoding: "utf8",
      },
    );
    expect(upgraded.status).toBe(0);
    expect(JSON.parse(upgraded.stdout)).toHaveLength(1);
    expect(upgraded.stderr).toMatch(/cli: code cache absent\n[\s\S]*cli: code cache written \(run 1 of 4\)/);
    const names = codeCaches(cacheDir);
    // The one just written, and the three most recent others (the oldest fake one is gone).
    expect(names).toHaveLength(4);
    expect(names).toContain(path.basename(current));
    expect(names).not.toContain(path.basename(old[0]));
    expect(names).not.toContain(path.basename(old[1]));
  });
});
