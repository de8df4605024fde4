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
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
