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
    // Two test files at a time even on 2 cores (vitest's default there is one): most of a test's
    // time is spent waiting on the git and ghostcommit processes it starts, and each test works
    // in its own temporary directories. 600 -> 411 s for the whole suite on a 2-core machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
