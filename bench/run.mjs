// npm run bench [-- --quick] [--runs N] [--warmup N] [--out FILE] [--trees DIR] [--only a,b] [--no-anchors]
//                  [--repo DIR]...
// Builds deterministic trees (cached under bench/.trees), measures ghostcommit against
// `git status` and the anchors' algorithms side by side, prints a table, writes JSON. `--repo`
// measures a copy of a real repository instead (see lib/own-repo.mjs), or besides the trees
// `--only` names.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gitCases, plainCases } from "./lib/cases.mjs";
import { makeContext } from "./lib/context.mjs";
import { git, hermeticEnv, watchedRoots, watchmanServerRunning } from "./lib/env.mjs";
import { spawnSync } from "node:child_process";
import { ensureTree, fileCount } from "./lib/generate.mjs";
import { pinBuild } from "./lib/ghostcommit.mjs";
import { BenchUsageError, ensureRepoTree, makeRepoContext } from "./lib/own-repo.mjs";
import { alternate } from "./lib/measure.mjs";
import { nodeBaseline, profileSnapshot } from "./lib/profile.mjs";
import { bars, format, ratios } from "./lib/report.mjs";
import { FULL, QUICK } from "./trees.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = {
    quick: false,
    runs: null,
    warmup: null,
    out: null,
    trees: null,
    only: null,
    noAnchors: false,
    repos: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split("=", 2);
    const value = () => inline ?? argv[++i];
    if (flag === "--quick") args.quick = true;
    else if (flag === "--runs") args.runs = Number(value());
    else if (flag === "--warmup") args.warmup = Number(value());
    else if (flag === "--out") args.out = path.resolve(value());
    else if (flag === "--trees") args.trees = path.resolve(value());
    else if (flag === "--only") args.only = value().split(",");
    else if (flag === "--no-anchors") args.noAnchors = true;
    else if (flag === "--repo") args.repos.push(path.resolve(value()));
    else throw new Error(`unknown argument: ${argv[i]}`);
  }
  return args;
}

const log = (line) => process.stderr.write(`${line}\n`);

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const build = pinBuild();
  const generated = args.repos.length > 0 && !args.only ? [] : args.quick ? QUICK : FULL;
  const specs = generated.filter((s) => !args.only || args.only.includes(s.name));
  const runs = args.runs ?? (args.quick ? 1 : 5);
  const warmup = args.warmup ?? (args.quick ? 0 : 1);
  const treesDir = args.trees ?? path.join(here, ".trees");
  const out = args.out ?? path.join(here, "results", "latest.json");
  // Scratch sits beside the trees: same file system, so the store can hard-link the user's packs.
  const scratch = path.join(treesDir, `scratch-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  const env = hermeticEnv(scratch);
  const result = {
    schema: 1,
    mode: args.quick ? "quick" : "full",
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? "unknown",
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      git: git(["--version"], { env }).stdout.toString().trim(),
      platform: `${os.platform()} ${os.release()}`,
    },
    runs,
    warmup,
    methods: {
      time: "wall clock of each process (spawnSync), cases alternated round by round; median, min, max of counted runs",
      rss: "peak RSS of the ghostcommit node process alone (process.resourceUsage().maxRSS in an in-process wrapper that requires the CLI entry dist/ghostcommit.cjs); git children not included",
      disk: "apparent bytes of the data dir's files with nlink = 1 (hard-linked packs shared with the user's repo left out), after minus before",
      changed: "zlib size of the changed files as loose blobs",
      anchors: "objects written to a throw-away object dir with the repo's objects as an alternate",
    },
    trees: [],
    bars: [],
    profile: null,
  };
  const watchedBefore = new Set(watchedRoots());
  const watchmanWasRunning = watchmanServerRunning();
  try {
    const contexts = async function* () {
      for (const spec of specs) {
        const root = await ensureTree(spec, treesFor(spec, treesDir), env, log);
        yield makeContext(spec, root, env, scratch);
      }
      for (const source of args.repos)
        yield makeRepoContext(ensureRepoTree(source, treesDir, env, log), env, scratch);
    };
    for await (const context of contexts()) {
      const { spec } = context;
      log(`measuring ${spec.name}: ${warmup} warm-up + ${runs} counted rounds`);
      const ctx = { ...context, noAnchors: args.noAnchors };
      const cases = spec.kind === "git" ? gitCases(ctx) : plainCases(ctx);
      const tree = {
        name: spec.name,
        kind: spec.kind,
        description: describe(spec),
        spec,
        cases: alternate(cases, { warmup, runs, log }),
      };
      tree.ratios = ratios(tree);
      result.trees.push(tree);
      if (spec.profile) {
        log(`profiling one snapshot of ${spec.name}`);
        result.profile = {
          tree: spec.name,
          ...nodeBaseline(env, ctx.tempDir("home-baseline-")),
          snapshots: [profileSnapshot(ctx, true), profileSnapshot(ctx, false)],
        };
      }
    }
    const barTrees = (kind) => result.trees.filter((t) => t.spec.bars && t.kind === kind);
    result.bars = bars(barTrees("git"), barTrees("plain")[0]);
  } finally {
    // Watches the Watchman cases started would outlive the bench.
    for (const root of watchedRoots()) {
      if (!watchedBefore.has(root))
        spawnSync("watchman", ["--no-spawn", "watch-del", root], { stdio: "ignore" });
    }
    // And so would the server, where the bench is what started it.
    if (!watchmanWasRunning) spawnSync("watchman", ["--no-spawn", "shutdown-server"], { stdio: "ignore" });
    rmSync(scratch, { recursive: true, force: true });
    rmSync(build, { recursive: true, force: true });
  }
  process.stdout.write(`${format(result)}\n`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${path.relative(process.cwd(), out)}`);
}

/**
 * A plain directory must not lie inside any git work tree (ghostcommit would treat it as part of
 * that repository), so when the trees dir is inside one (bench/.trees is, in this checkout),
 * plain trees are cached in the system temp dir instead.
 */
function treesFor(spec, treesDir) {
  if (spec.kind !== "plain") return treesDir;
  for (let dir = treesDir; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, ".git"))) return path.join(os.tmpdir(), "ghostcommit-bench-trees");
    if (path.dirname(dir) === dir) return treesDir;
  }
}

function describe(spec) {
  if (spec.source)
    return `a copy of ${spec.source} at ${spec.head.slice(0, 12)}: ${spec.files.toLocaleString("en")} tracked files, ${spec.modified} edited, ${spec.added} new`;
  const dirs = spec.top + spec.top * spec.mid + spec.top * spec.mid * spec.leaf;
  const parts = [`${fileCount(spec).toLocaleString("en")} files in ${dirs.toLocaleString("en")} dirs`];
  if (spec.kind === "git") parts.push("one commit");
  parts.push(`${spec.modified} edited`);
  if (spec.added) parts.push(`${spec.added} new`);
  if (spec.nodeModules) parts.push(`node_modules of ${spec.nodeModules.toLocaleString("en")} (not ignored)`);
  if (spec.bigBytes) parts.push(`one ${(spec.bigBytes / 2 ** 20).toFixed(0)} MiB untracked file`);
  return parts.join(", ");
}

main().catch((error) => {
  log(error instanceof BenchUsageError ? `bench: ${error.message}` : (error.stack ?? String(error)));
  process.exitCode = 1;
});
