import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";

/** Names the folder of the code caches the suite's setup made (global-setup.ts), for each data home to start with. */
export const SEEDED_CODE_CACHE = "GHOSTCOMMIT_TEST_SEEDED_CODE_CACHE";

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
  const dataHome = path.join(home, "data");
  const seed = process.env[SEEDED_CODE_CACHE];
  if (seed && !existsSync(dataHome)) {
    const cacheDir = path.join(dataHome, "cache");
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    chmodSync(dataHome, 0o700);
    for (const name of readdirSync(seed).filter((n) => n.startsWith("cli-") && n.endsWith(".v8"))) {
      const copy = path.join(cacheDir, name);
      copyFileSync(path.join(seed, name), copy);
      chmodSync(copy, 0o600);
    }
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
    GHOSTCOMMIT_HOME: dataHome,
    XDG_CONFIG_HOME: path.join(home, "config"),
    HOME: home,
    NO_COLOR: "1",
  };
}

/** A fresh temp directory (real path, so comparisons with the workspace root hold). */
export function tempDir(prefix = "gc-test-"): string {
  return realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
}
