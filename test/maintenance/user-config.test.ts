import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileSandbox, treeDigest } from "../helpers/support.js";
import { storeDir } from "../hardening/helpers.js";

const { sandbox, repo } = fileSandbox();
const globalConfig = sandbox.env.GIT_CONFIG_GLOBAL as string;

/** Runs `body` with `text` as the user's global git config (git status fails there too). */
function withUserConfig(text: string, body: () => void): void {
  writeFileSync(globalConfig, text);
  try {
    body();
  } finally {
    writeFileSync(globalConfig, "");
  }
}

describe("a git configuration the user's git cannot read", () => {
  // Seen with `core.autocrlf = maybe` in ~/.gitconfig: every command failed as "cannot read
  // objects", code store-damaged, and doctor called the store's git directory damaged.
  it("is named as the user's to fix, by every command and by doctor, which repairs nothing", () => {
    const r = repo({ "a.txt": "a\n" });
    r.write({ "a.txt": "edited\n" });
    const snap = r.ok("snapshot");
    const store = storeDir(sandbox, r.dir);
    // Its git directory: the refs, objects and frame (the caches beside it may be renewed).
    const storeBefore = treeDigest(path.join(store, "git"));
    for (const [text, reason] of [
      ["[core]\n\tautocrlf = maybe\n", "bad boolean config value 'maybe' for 'core.autocrlf'"],
      ["[core]\n\texcludesFile = ~nosuchuser/ignore\n", "failed to expand user dir in: '~nosuchuser/ignore'"],
      ["[core\n", `bad config line 1 in file ${globalConfig}`],
    ]) {
      withUserConfig(text, () => {
        expect(() => r.git("status")).toThrow(reason); // the user's git fails alike
        for (const args of [["snapshot"], ["list"], ["restore", snap.id], ["show", snap.id]]) {
          const run = r.cli([...args, "--json"]);
          expect([args[0], run.status, run.json?.error?.code]).toEqual([args[0], 1, "bad-config"]);
          expect(run.json.error.message).toBe(
            `git cannot read its configuration: ${reason}; every git command here fails the same way (git status too) until that is fixed`,
          );
          expect(run.stderr).toBe(`ghostcommit: ${run.json.error.message}\n`);
        }
        for (const args of [["doctor"], ["doctor", "--repair"]]) {
          const run = r.cli([...args, "--json"]);
          expect(run.status).toBe(1);
          expect(run.json.problems).toEqual([
            {
              code: "bad-git-config",
              message: `git cannot read its configuration: ${reason}; every git command here fails the same way (git status too) until that is fixed`,
              ...(reason.includes(" in file ") ? { path: globalConfig } : {}),
            },
          ]);
          expect(run.json.repaired).toBeUndefined();
        }
      });
      // Nothing in the store was changed or dropped, and all works again once the config is fixed.
      expect(treeDigest(path.join(store, "git"))).toEqual(storeBefore);
      expect(r.read("a.txt")).toBe("edited\n");
    }
    expect(r.ok("list").map((s: { id: string }) => s.id)).toEqual([snap.id]);
    expect(r.ok("doctor").ok).toBe(true);
  });

  it("in the repository's own config names that file", () => {
    const r = repo({ "a.txt": "a\n" });
    const config = path.join(r.dir, ".git", "config");
    const kept = readFileSync(config, "utf8");
    writeFileSync(config, `${kept}[core\n`);
    const line = kept.split("\n").length;
    const run = r.cli(["snapshot", "--json"]);
    expect([run.status, run.json?.error?.code]).toEqual([1, "bad-config"]);
    expect(run.json.error.message).toContain(`bad config line ${line} in file ${config}`);
    const doctor = r.cli(["doctor", "--json"]);
    expect(doctor.json.problems.map((p: { code: string; path?: string }) => [p.code, p.path])).toEqual([
      ["bad-git-config", config],
    ]);
    writeFileSync(config, kept);
    expect(r.ok("snapshot").fileCount).toBe(1);
  });

  it("a value git refuses in the repository's own config fails every command as git does, as doctor says", () => {
    const r = repo({ "a.txt": "a\n" });
    const snap = r.ok("snapshot");
    r.write({ "a.txt": "edited\n" });
    for (const key of [
      "core.autocrlf",
      "core.safecrlf",
      "core.filemode",
      "core.ignorecase",
      "core.symlinks",
    ]) {
      r.git("config", key, "maybe");
      const reason = `bad boolean config value 'maybe' for '${key}'`;
      expect(() => r.git("status")).toThrow(reason);
      // Before, status read only the store's copy of the settings: the commands went on.
      for (const args of [["snapshot"], ["restore", snap.id], ["diff", snap.id]]) {
        const run = r.cli([...args, "--json"]);
        expect([key, args[0], run.status, run.json?.error?.code]).toEqual([key, args[0], 1, "bad-config"]);
        expect(run.json.error.message).toContain(reason);
      }
      expect(r.cli(["doctor", "--json"]).json.problems.map((p: { code: string }) => p.code)).toEqual([
        "bad-git-config",
      ]);
      r.git("config", "--unset", key);
    }
    expect(r.read("a.txt")).toBe("edited\n");
    expect(r.ok("snapshot").fileCount).toBe(1);
  });
});
