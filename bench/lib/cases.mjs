// The measured cases of one tree: the floor, ghostcommit's commands and the anchors.
import { cpSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { codexV1, codexV2, openCode } from "./anchors.mjs";
import { compressedSize } from "./context.mjs";
import { ownBytes } from "./disk.mjs";
import { git, watchmanInstalled, withWatchman } from "./env.mjs";
import { ghostcommit, ghostcommitInProcess } from "./ghostcommit.mjs";

const STATUS = ["--no-optional-locks", "status", "--porcelain=2", "-z", "--untracked-files=all"];

function gc(ctx, home, args, ok) {
  return ghostcommit(ctx.root, home, args, { env: ctx.env, scratch: ctx.scratch, ok });
}

/** A snapshot in a store that already has one: the 20 edited files changed since. */
function laterSnapshotCase(ctx, id, label) {
  const home = ctx.tempDir("home-later-");
  gc(ctx, home, ["snapshot"]);
  let before = 0;
  let changed = 0;
  return {
    id,
    label,
    setup() {
      before = ownBytes(home).bytes;
      changed = compressedSize(ctx.mutate());
    },
    run() {
      const r = gc(ctx, home, ["snapshot"]);
      return {
        ms: r.ms,
        peakRssKiB: r.rssKiB,
        growthBytes: ownBytes(home).bytes - before,
        changedBytes: changed,
      };
    },
  };
}

/** The library call in a running process, then as the first call in a fresh one. */
function libraryLaterSnapshotCases(ctx, id = "snapshot_later_library", what = "later") {
  return [
    libraryLaterSnapshotCase(
      ctx,
      id,
      `ghostcommit snapshot (${what}, library call in a running process)`,
      true,
    ),
    libraryLaterSnapshotCase(
      ctx,
      `${id}_cold`,
      `ghostcommit snapshot (${what}, library call, first in a fresh process)`,
      false,
    ),
  ];
}

/**
 * A later snapshot timed inside the library call: no Node start-up, no module loading. `running`:
 * in a process that has taken a snapshot before (an embedding agent, the MCP server), which then
 * edits the same 20 files; otherwise the first call in a fresh process (its code runs cold).
 */
function libraryLaterSnapshotCase(ctx, id, label, running) {
  const home = ctx.tempDir("home-library-");
  gc(ctx, home, ["snapshot"]);
  const editsFile = path.join(home, "edits.json");
  writeFileSync(editsFile, JSON.stringify(ctx.editedPaths));
  return {
    id,
    label,
    setup: () => ctx.mutate(),
    run: () => ({
      ms: ghostcommitInProcess(ctx.root, home, "snapshot", {
        env: ctx.env,
        editsFile: running ? editsFile : null,
      }),
    }),
  };
}

/**
 * The code cache of a data directory that has run ghostcommit before (the first runs write it),
 * made once per tree: a user's first snapshot in a new repository finds it there.
 */
function usedCodeCache(ctx) {
  if (!ctx.usedCodeCache) {
    const home = ctx.tempDir("home-used-");
    for (let i = 0; i < 4; i++) gc(ctx, home, ["snapshot"]);
    ctx.usedCodeCache = path.join(home, "cache");
  }
  return ctx.usedCodeCache;
}

/**
 * A snapshot into a new store: in a data dir that has run ghostcommit before (`used`, the SPEC
 * case: a new store, not a new installation), or in a new one, with no code cache yet.
 * `changed` is false where everything is new (plain dirs).
 */
function firstSnapshotCase(ctx, id, label, { changed = true, used = true } = {}) {
  let home;
  let changedBytes;
  return {
    id,
    label,
    setup() {
      home = ctx.tempDir("home-first-");
      if (used) cpSync(usedCodeCache(ctx), path.join(home, "cache"), { recursive: true });
      if (changed) changedBytes = compressedSize(ctx.changedContent());
    },
    run() {
      const r = gc(ctx, home, ["snapshot"]);
      const disk = ownBytes(home);
      return {
        ms: r.ms,
        peakRssKiB: r.rssKiB,
        backgroundMs: r.backgroundMs,
        growthBytes: disk.bytes,
        allocatedBytes: disk.allocated,
        changedBytes,
      };
    },
    teardown() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Restore of the edited paths to a snapshot of the canonical working state. */
function restoreCase(ctx, id, label) {
  const home = ctx.tempDir("home-restore-");
  const target = gc(ctx, home, ["snapshot"]).json.id; // taken in the canonical working state
  return {
    id,
    label,
    setup: () => ctx.mutate(),
    run() {
      const r = gc(ctx, home, ["restore", target], [0, 1]);
      if (!r.json) throw new Error(`restore exited ${r.status} without JSON`);
      const expected = new Set(ctx.editedPaths);
      const wrong = r.json.written.filter((p) => !expected.has(p)).length + r.json.deleted.length;
      return { ms: r.ms, peakRssKiB: r.rssKiB, written: r.json.written.length, maxWrongWrites: wrong };
    },
  };
}

/** An agent's turn: begin, the edits (untimed), end. */
function turnCase(ctx, id, label) {
  const home = ctx.tempDir("home-turn-");
  return {
    id,
    label,
    run(round) {
      const ids = ["--session", "bench", "--turn", `t${round}`];
      const begin = gc(ctx, home, ["turn", "begin", ...ids]);
      ctx.mutate(); // the agent's edits, untimed
      const end = gc(ctx, home, ["turn", "end", ...ids]);
      return {
        ms: begin.ms + end.ms,
        beginMs: begin.ms,
        endMs: end.ms,
        peakRssKiB: Math.max(begin.rssKiB, end.rssKiB),
      };
    },
  };
}

/**
 * Cases for a git repository (status floor, ghostcommit, anchors). A tree of the scale curve
 * (`spec.scale`), or any tree with `--no-anchors`, runs only the floor, the snapshots and restore.
 */
export function gitCases(ctx) {
  const { root, env } = ctx;
  const core = [
    {
      id: "status",
      label: "git status --porcelain=2 -z -uall",
      run: () => ({ ms: git(STATUS, { cwd: root, env }).ms }),
    },
    firstSnapshotCase(ctx, "snapshot_first", "ghostcommit snapshot (first, new store)"),
    firstSnapshotCase(
      ctx,
      "snapshot_first_new_home",
      "ghostcommit snapshot (first, new data dir: no code cache)",
      {
        used: false,
      },
    ),
    laterSnapshotCase(ctx, "snapshot_later", "ghostcommit snapshot (later)"),
    ...libraryLaterSnapshotCases(ctx),
    restoreCase(ctx, "restore", `ghostcommit restore (${ctx.editedPaths.length} changed paths)`),
  ];
  if (ctx.spec.scale) return core;
  if (watchmanInstalled) {
    // Watchman answers status through git's fsmonitor hook; the first two snapshots (untimed)
    // start the watch and trade git's first token for one of Watchman's.
    const watching = { ...ctx, env: withWatchman(env, ctx.scratch) };
    const cli = laterSnapshotCase(
      watching,
      "snapshot_later_watchman",
      "ghostcommit snapshot (later, Watchman)",
    );
    const [library, libraryCold] = libraryLaterSnapshotCases(
      watching,
      "snapshot_later_library_watchman",
      "later, Watchman",
    );
    const restore = restoreCase(
      watching,
      "restore_watchman",
      "ghostcommit restore (20 changed paths, Watchman)",
    );
    const turn = turnCase(watching, "turn_watchman", "ghostcommit turn begin + turn end (Watchman)");
    for (const c of [cli, library, libraryCold, restore]) {
      c.setup();
      c.run();
    }
    turn.run(-1);
    core.push(cli, library, libraryCold, restore, turn);
  }
  core.push(turnCase(ctx, "turn", "ghostcommit turn begin + turn end"));
  if (ctx.noAnchors) return core;
  const openCodeDir = path.join(ctx.tempDir("opencode-later-"), "git");
  openCode(root, env, openCodeDir);
  let ocBefore = 0;
  return [
    ...core,
    {
      id: "codex_v1",
      label: "Codex v1 / T3: read-tree HEAD, add -A, write-tree, commit-tree",
      run: () => codexV1(root, env, ctx.scratch),
    },
    {
      id: "codex_v2",
      label: "Codex v2: read-tree HEAD, add status paths (batches of 100)",
      run: () => codexV2(root, env, ctx.scratch),
    },
    {
      id: "opencode_first",
      label: "OpenCode: separate git dir, add ., write-tree (first)",
      run() {
        const dir = path.join(ctx.tempDir("opencode-first-"), "git");
        try {
          const r = openCode(root, env, dir);
          return { ...r, storeBytes: ownBytes(dir).bytes };
        } finally {
          rmSync(path.dirname(dir), { recursive: true, force: true });
        }
      },
    },
    {
      id: "opencode_later",
      label: "OpenCode (later, persistent index)",
      setup() {
        ocBefore = ownBytes(openCodeDir).bytes;
        ctx.mutate();
      },
      run() {
        const r = openCode(root, env, openCodeDir);
        return { ...r, growthBytes: ownBytes(openCodeDir).bytes - ocBefore };
      },
    },
  ];
}

/** Cases for a plain directory: `git add -A` into a fresh repo, status of a repo of it, ghostcommit. */
export function plainCases(ctx) {
  const { root, env } = ctx;
  const refDir = path.join(ctx.tempDir("plain-ref-"), "git");
  const refEnv = { GIT_DIR: refDir, GIT_WORK_TREE: root };
  git(["init", "-q", "--bare", refDir], { cwd: root, env });
  git(["config", "core.bare", "false"], { cwd: root, env, extra: refEnv });
  git(["add", "-A"], { cwd: root, env, extra: refEnv });
  git(["commit", "-q", "--no-verify", "-m", "ref"], { cwd: root, env, extra: refEnv });
  let fresh;
  return [
    {
      id: "status",
      label: "git status -uall of a repo of the dir (the store's floor)",
      run: () => ({ ms: git(STATUS, { cwd: root, env, extra: refEnv }).ms }),
    },
    {
      id: "add_all_fresh",
      label: "git add -A into a fresh repo",
      setup() {
        fresh = path.join(ctx.tempDir("plain-fresh-"), "git");
        git(["init", "-q", "--bare", fresh], { cwd: root, env });
        git(["config", "core.bare", "false"], { cwd: root, env, extra: { GIT_DIR: fresh } });
      },
      run: () => ({
        ms: git(["add", "-A"], { cwd: root, env, extra: { GIT_DIR: fresh, GIT_WORK_TREE: root } }).ms,
      }),
      teardown: () => rmSync(path.dirname(fresh), { recursive: true, force: true }),
    },
    firstSnapshotCase(ctx, "snapshot_first", "ghostcommit snapshot (first, new store)", { changed: false }),
    laterSnapshotCase(ctx, "snapshot_later", "ghostcommit snapshot (later)"),
    ...libraryLaterSnapshotCases(ctx),
  ];
}
