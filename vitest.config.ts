import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

// The benchmark's smoke run (test/bench) takes a minute of tree generation: it runs with
// `npm run test:bench` (and in CI), not in every `npm test`.
const benchSmoke = process.env.GHOSTCOMMIT_BENCH_SMOKE === "1";

export default defineConfig({
  test: {
    include: benchSmoke ? ["test/bench/**/*.test.ts"] : ["test/**/*.test.ts"],
    exclude: benchSmoke ? configDefaults.exclude : [...configDefaults.exclude, "test/bench/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Three test files at a time even on 2 cores (vitest's default there is one): a test waits on
    // the git and ghostcommit processes it starts, on servers and on the browser, and each works in
    // its own temporary directories. On 2 cores the suite is then bound by CPU (both ~90 % busy).
    maxWorkers: Math.max(3, availableParallelism() + 1),
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
