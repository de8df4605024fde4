// The trees the bench builds. A tree's bytes follow from its spec (see lib/generate.mjs).
const MiB = 2 ** 20;

/** Full run: the trees of the performance bars. `bars`: judged against them; `profile`: per-process breakdown. */
export const FULL = [
  // 10 × 20 × 25 = 5,000 leaf dirs of 20 files (5,210 dirs in all), ~350 MB of text.
  {
    name: "repo-100k",
    kind: "git",
    seed: 1,
    top: 10,
    mid: 20,
    leaf: 25,
    filesPerLeaf: 20,
    modified: 20,
    added: 10,
    nodeModules: 5000,
    bigBytes: 20 * MiB,
    bars: true,
    profile: true,
  },
  {
    name: "repo-2k",
    kind: "git",
    seed: 2,
    top: 2,
    mid: 5,
    leaf: 10,
    filesPerLeaf: 20,
    modified: 20,
    added: 10,
    nodeModules: 500,
    bigBytes: 20 * MiB,
  },
  // 49,000 files: just under the default plain-directory budget of 50,000 files.
  {
    name: "plain-50k",
    kind: "plain",
    seed: 3,
    top: 7,
    mid: 14,
    leaf: 25,
    filesPerLeaf: 20,
    modified: 20,
    added: 0,
    nodeModules: 0,
    bigBytes: 0,
    bars: true,
  },
];

/** Quick run (the test suite): tiny trees, one round, so the bench cannot rot. */
export const QUICK = [
  {
    name: "quick-repo",
    kind: "git",
    seed: 4,
    top: 1,
    mid: 2,
    leaf: 5,
    filesPerLeaf: 20,
    modified: 20,
    added: 10,
    nodeModules: 60,
    bigBytes: 11 * MiB,
    bars: true,
    profile: true,
  },
  {
    name: "quick-plain",
    kind: "plain",
    seed: 5,
    top: 1,
    mid: 2,
    leaf: 5,
    filesPerLeaf: 20,
    modified: 20,
    added: 0,
    nodeModules: 0,
    bigBytes: 0,
    bars: true,
  },
];
