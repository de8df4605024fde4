import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Repo, Sandbox } from "../helpers/repo.js";

/**
 * Codex's hooks can be switched off in its config.toml (developers.openai.com/codex/hooks: hooks
 * are on by default, `[features] hooks = false` disables them; `codex_hooks` is the deprecated
 * name, which older builds needed set to true). Installed hooks that never run are an undo the
 * user counts on and does not have: install and doctor say so, as they do for Gemini CLI.
 */
let sandbox: Sandbox;
let repo: Repo;
beforeEach(() => {
  sandbox = new Sandbox();
  repo = sandbox.repo("repo", { "a.txt": "a\n" });
});
afterEach(() => sandbox.cleanup());

const OLDER_BUILDS =
  "Older Codex builds also need `codex_hooks = true` under `[features]` in ~/.codex/config.toml.";

describe("Codex switches", () => {
  it("install and doctor say when Codex's config.toml switches its hooks off", () => {
    const user = path.join(sandbox.home, ".codex", "config.toml");
    mkdirSync(path.dirname(user), { recursive: true });
    writeFileSync(
      user,
      'model = "gpt-5"\n\n[features]\nweb_search = true\nhooks = false # not now\n\n[mcp_servers.docs]\ncommand = "docs"\n',
    );
    const off = `Codex runs no hooks: \`hooks = false\` under [features] in ${user}, so ghostcommit records no turn (remove it, or set it to true, for undo)`;
    const installed = repo.ok("install", "codex");
    expect(installed.warnings).toEqual([off]);
    expect(installed.notes).not.toContain(OLDER_BUILDS);
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([
      { code: "hook-switched-off", message: off },
    ]);

    // The project's config (a dotted key here) wins over the user's.
    mkdirSync(repo.path(".codex"), { recursive: true });
    writeFileSync(repo.path(".codex/config.toml"), "features.hooks = true\n");
    expect(repo.ok("install", "codex").warnings).toEqual([]);
    expect(repo.cli(["doctor", "--json"]).json.problems).toEqual([]);

    // The deprecated name, off, in an inline table; then on, which makes the older builds' note moot.
    writeFileSync(repo.path(".codex/config.toml"), "features = { codex_hooks = false }\n");
    expect(repo.ok("install", "codex").warnings).toEqual([
      `Codex runs no hooks: \`codex_hooks = false\` under [features] in ${repo.path(".codex/config.toml")}, so ghostcommit records no turn (remove it, or set it to true, for undo)`,
    ]);
    writeFileSync(repo.path(".codex/config.toml"), "[features]\ncodex_hooks = true\n");
    const on = repo.ok("install", "codex");
    expect([on.warnings, on.notes.includes(OLDER_BUILDS)]).toEqual([[], false]);

    // Without any switch, the note stays.
    writeFileSync(repo.path(".codex/config.toml"), "");
    writeFileSync(user, 'model = "gpt-5"\n');
    expect(repo.ok("install", "codex").notes).toContain(OLDER_BUILDS);
  });

  it("reads the repository root's .codex/config.toml from a subdirectory, and no key inside a string", () => {
    const user = path.join(sandbox.home, ".codex", "config.toml");
    mkdirSync(path.dirname(user), { recursive: true });
    // Text in a multi-line string is no table nor key.
    writeFileSync(user, 'instructions = """\n[features]\nhooks = false\n"""\nmodel = "gpt-5"\n');
    expect(repo.ok("install", "codex").warnings).toEqual([]);
    mkdirSync(repo.path(".codex"), { recursive: true });
    mkdirSync(repo.path("src/lib"), { recursive: true });
    writeFileSync(repo.path(".codex/config.toml"), "[features]\nhooks = false\n");
    const off = `Codex runs no hooks: \`hooks = false\` under [features] in ${repo.path(".codex/config.toml")}, so ghostcommit records no turn (remove it, or set it to true, for undo)`;
    // Codex started in src/lib reads the root's .codex/config.toml: its hooks are off there too.
    const sub = repo.path("src/lib");
    expect(sandbox.ok(sub, "install", "codex").warnings).toEqual([off]);
    expect(sandbox.cli(sub, ["doctor", "--json"]).json.problems).toEqual([
      { code: "hook-switched-off", message: off },
    ]);
    // A nearer one wins.
    mkdirSync(repo.path("src/.codex"), { recursive: true });
    writeFileSync(repo.path("src/.codex/config.toml"), "[features]\nhooks = true\n");
    expect(sandbox.ok(sub, "install", "codex").warnings).toEqual([]);
  });
});
