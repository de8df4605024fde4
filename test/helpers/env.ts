import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Hermetic environment for every git and ghostcommit process a test starts: no system or user
 * git config, an explicit identity, and a private data directory.
 */
export function hermeticEnv(home: string): NodeJS.ProcessEnv {
  const globalConfig = path.join(home, "gitconfig");
  writeFileSync(globalConfig, "", { flag: "a" });
  // Tests leave Watchman alone unless they are about it (see userConfig): a watch per temporary
  // repository would outlive the test. Both places, for tests that run with only HOME set.
  for (const dir of [path.join(home, "config"), path.join(home, ".config")]) {
    mkdirSync(path.join(dir, "ghostcommit"), { recursive: true });
    const file = path.join(dir, "ghostcommit", "config.json");
    if (!existsSync(file)) writeFileSync(file, '{"watchman": false}\n');
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (/^(GIT|GHOSTCOMMIT)_/.test(key)) delete env[key];
  // Node parses this certificate bundle at every start (~40 ms of each of the suite's thousands of
  // CLI runs here) for TLS that ghostcommit never makes.
  delete env.NODE_EXTRA_CA_CERTS;
  return {
    ...env,
    GIT_CONFIG_GLOBAL: globalConfig,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Test User",
    GIT_AUTHOR_EMAIL: "test@example.com",
    GIT_COMMITTER_NAME: "Test User",
    GIT_COMMITTER_EMAIL: "test@example.com",
    GHOSTCOMMIT_HOME: path.join(home, "data"),
    XDG_CONFIG_HOME: path.join(home, "config"),
    HOME: home,
    NO_COLOR: "1",
  };
}

/** A fresh temp directory (real path, so comparisons with the workspace root hold). */
export function tempDir(prefix = "gc-test-"): string {
  return realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
}
