import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { hermeticEnv, SEEDED_CODE_CACHE, tempDir } from "./env.js";
import { CLI } from "./repo.js";

/**
 * Watchman's server outlives the watches the tests about it start and remove: when the suite is
 * what started it (none answered before), it is stopped once every test file is done, so a run
 * leaves no daemon behind. Test files run side by side, so none of them can stop it earlier.
 *
 * Every test has its own data home, so each would compile the CLI's bundle afresh and write V8's
 * code cache over its first few runs, as a new user's first commands do (~70 ms of CPU each, over
 * the suite's thousands of runs). The cache is made once here, by the commands tests run most,
 * and each sandbox's data home starts with a copy (tests about the cache remove it).
 */
export default function setup(): () => void {
  const wasRunning = spawnSync("watchman", ["--no-spawn", "watch-list"], { stdio: "ignore" }).status === 0;
  const seed = seedCodeCache();
  return () => {
    if (seed) rmSync(seed, { recursive: true, force: true });
    if (!wasRunning) spawnSync("watchman", ["--no-spawn", "shutdown-server"], { stdio: "ignore" });
  };
}

function seedCodeCache(): string | undefined {
  const home = tempDir("gc-test-seed-");
  const env = hermeticEnv(home);
  const repo = path.join(home, "repo");
  mkdirSync(repo);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, env, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  writeFileSync(path.join(repo, "a.txt"), "a\n");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env, encoding: "utf8" });
  // Four runs write the cache, each adding what it compiled: commands that succeed, as a
  // failing one writes nothing.
  cli("snapshot", "-m", "one");
  cli("turn", "begin", "--session", "s", "--turn", "t1", "--prompt", "p");
  writeFileSync(path.join(repo, "b.txt"), "b\n");
  cli("turn", "end", "--session", "s");
  cli("rewind", "--session", "s", "--to", "t1", "--json");
  // A hook event's runs write a cache of their own: a Claude Code turn with an edit.
  const event = (name: string, extra: object = {}) =>
    JSON.stringify({ session_id: "h", transcript_path: "/t", cwd: repo, hook_event_name: name, ...extra });
  const edit = { tool_name: "Edit", tool_input: { file_path: path.join(repo, "a.txt") }, tool_use_id: "e" };
  const hook = (input: string) =>
    spawnSync(process.execPath, [CLI, "hook", "claude-code"], { cwd: repo, env, input, encoding: "utf8" });
  hook(event("UserPromptSubmit", { prompt: "p" }));
  hook(event("PreToolUse", edit));
  writeFileSync(path.join(repo, "a.txt"), "a2\n");
  hook(event("PostToolUse", { ...edit, tool_response: {} }));
  hook(event("Stop", { stop_hook_active: false }));
  const cacheDir = path.join(env.GHOSTCOMMIT_HOME!, "cache");
  // None made (a CLI that does not run: the tests say why): each sandbox starts without one.
  const entries = existsSync(cacheDir) ? readdirSync(cacheDir) : [];
  if (entries.some((name) => name.startsWith("cli-"))) process.env[SEEDED_CODE_CACHE] = cacheDir;
  return home;
}
