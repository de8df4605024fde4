// Hermetic process environment and timed process runners shared by the bench.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Variables that would point git at another repository or change its behaviour, and
 * NODE_EXTRA_CA_CERTS: Node parses that certificate bundle at every start (on a machine whose
 * network goes through a proxy with its own CA it added ~85 ms to `node -e 0`), for TLS that
 * ghostcommit never makes. The profile records Node's start with the caller's environment too.
 */
const DROP = /^(GIT_|GHOSTCOMMIT_|NODE_EXTRA_CA_CERTS$)/;

/** An XDG config dir whose ghostcommit config holds only `settings`. */
function configDir(scratch, name, settings) {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, "ghostcommit"), { recursive: true });
  writeFileSync(path.join(dir, "ghostcommit", "config.json"), JSON.stringify(settings));
  return dir;
}

/** The same environment with Watchman answering status (where it is installed). */
export function withWatchman(env, scratch) {
  return { ...env, XDG_CONFIG_HOME: configDir(scratch, "xdg-config-watchman", { watchman: true }) };
}

/** Whether Watchman is installed here. */
export const watchmanInstalled = spawnSync("watchman", ["--version"]).status === 0;

/** The roots Watchman watches now (none when its daemon is not running). */
/** Whether Watchman's server answers now (without starting one). */
export function watchmanServerRunning() {
  return spawnSync("watchman", ["--no-spawn", "watch-list"], { stdio: "ignore" }).status === 0;
}

export function watchedRoots() {
  const r = spawnSync("watchman", ["--no-pretty", "--no-spawn", "watch-list"], { encoding: "utf8" });
  try {
    return JSON.parse(r.stdout).roots ?? [];
  } catch {
    return [];
  }
}

/**
 * The base environment: user and system git config switched off, fixed identity and locale,
 * and an XDG config dir of its own so no user-wide ghostcommit config changes what is measured;
 * Watchman is off there, and on only in the cases named for it (`withWatchman`).
 */
export function hermeticEnv(scratch) {
  const emptyConfig = path.join(scratch, "empty.gitconfig");
  writeFileSync(emptyConfig, "");
  const env = {};
  for (const [key, value] of Object.entries(process.env)) if (!DROP.test(key)) env[key] = value;
  return Object.assign(env, {
    LC_ALL: "C",
    GIT_CONFIG_GLOBAL: emptyConfig,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    GIT_AUTHOR_DATE: "1700000000 +0000",
    GIT_COMMITTER_DATE: "1700000000 +0000",
    GIT_TERMINAL_PROMPT: "0",
    XDG_CONFIG_HOME: configDir(scratch, "xdg-config", { watchman: false }),
  });
}

/** Runs a command to completion; throws with its stderr on an unexpected exit code. */
export function run(cmd, args, { cwd, env, input, ok = [0] } = {}) {
  const started = process.hrtime.bigint();
  const result = spawnSync(cmd, args, { cwd, env, input, maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.error) throw result.error;
  if (!ok.includes(result.status)) {
    const stderr = result.stderr.toString().trim().slice(-2000);
    throw new Error(`${cmd} ${args.slice(0, 4).join(" ")} exited ${result.status}: ${stderr}`);
  }
  return { ms, stdout: result.stdout, stderr: result.stderr.toString(), status: result.status };
}

/** Runs git with the given env (and optional extra variables). */
export function git(args, { cwd, env, extra, input, ok } = {}) {
  return run("git", args, { cwd, env: extra ? { ...env, ...extra } : env, input, ok });
}
