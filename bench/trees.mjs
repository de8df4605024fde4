// The trees the bench builds. A tree's bytes follow from its spec (see lib/generate.mjs).
const MiB = 2 ** 20;

/** Full run: the trees of the performance bars. `bars`: judged against them; `profile`: per-process breakdown. */
// 10 × 20 × 25 = 5,000 leaf dirs of 20 files (5,210 dirs in all), ~350 MB of text.
const REPO_100K = {
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
};

export const FULL = [
  { ...REPO_100K, profile: true },
  // The same tree with a root `.gitattributes` of `* text=auto eol=lf` (common in JS repositories):
  // the same bars apply.
  { ...REPO_100K, name: "repo-100k-attrs", attributes: "* text=auto eol=lf\n" },
  // The scale curve: 10k and 300k files beside the 100k tree (status, snapshot first/later, restore).
  {
    name: "repo-10k",
    kind: "git",
    seed: 6,
    top: 5,
    mid: 4,
    leaf: 25,
    filesPerLeaf: 20,
    modified: 20,
    added: 10,
    nodeModules: 500,
    bigBytes: 20 * MiB,
    scale: true,
  },
  // 30 top-level dirs instead of 10: three times the 100k tree.
  { ...REPO_100K, name: "repo-300k", seed: 7, top: 30, bars: false, scale: true },
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
