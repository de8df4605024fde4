// Hermetic process environment and timed process runners shared by the bench.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Variables that would point git at another repository or change its behaviour. */
const DROP = /^(GIT_|GHOSTCOMMIT_)/;

/**
 * The base environment: user and system git config switched off, fixed identity and locale,
 * and an empty XDG config dir so no user-wide ghostcommit config changes what is measured.
 */
export function hermeticEnv(scratch) {
  mkdirSync(path.join(scratch, "xdg-config"), { recursive: true });
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
    XDG_CONFIG_HOME: path.join(scratch, "xdg-config"),
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
