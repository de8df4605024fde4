// The anchors' published snapshot algorithms, replayed as plain git command sequences.
// Objects they write go to a throw-away object directory (the user's objects are reachable as
// an alternate), so runs neither pollute the measured repository nor depend on each other.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { ownBytes } from "./disk.mjs";
import { git } from "./env.mjs";

const BATCH = 100;

function tempIndexEnv(root, scratch, prefix) {
  const dir = mkdtempSync(path.join(scratch, prefix));
  const objects = path.join(dir, "objects");
  mkdirSync(objects);
  return {
    dir,
    objects,
    extra: {
      GIT_INDEX_FILE: path.join(dir, "index"),
      GIT_OBJECT_DIRECTORY: objects,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(root, ".git", "objects"),
    },
  };
}

function finish(root, env, extra, started) {
  const tree = git(["write-tree"], { cwd: root, env, extra }).stdout.toString().trim();
  git(["commit-tree", tree, "-p", "HEAD", "-m", "snapshot"], { cwd: root, env, extra });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Codex v1 / T3 Code: temp index from `read-tree HEAD`, `add -A`, `write-tree`, `commit-tree`. */
export function codexV1(root, env, scratch) {
  const t = tempIndexEnv(root, scratch, "codex1-");
  try {
    const started = process.hrtime.bigint();
    git(["read-tree", "HEAD"], { cwd: root, env, extra: t.extra });
    git(["add", "-A"], { cwd: root, env, extra: t.extra });
    const ms = finish(root, env, t.extra, started);
    return { ms, objectBytes: ownBytes(t.objects).bytes };
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
}

/** Codex v2: temp index from `read-tree HEAD`, then `add` of the paths `git status` lists, in batches. */
export function codexV2(root, env, scratch) {
  const t = tempIndexEnv(root, scratch, "codex2-");
  try {
    const started = process.hrtime.bigint();
    git(["read-tree", "HEAD"], { cwd: root, env, extra: t.extra });
    const status = git(["status", "--porcelain=2", "-z", "--untracked-files=all"], { cwd: root, env });
    const paths = statusPaths(status.stdout);
    for (let i = 0; i < paths.length; i += BATCH) {
      git(["add", "--all", "--", ...paths.slice(i, i + BATCH)], {
        cwd: root,
        env,
        extra: { ...t.extra, GIT_LITERAL_PATHSPECS: "1" },
      });
    }
    const ms = finish(root, env, t.extra, started);
    return { ms, objectBytes: ownBytes(t.objects).bytes };
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
}

/** Paths of porcelain v2 -z records (changed, renamed, unmerged, untracked). */
export function statusPaths(out) {
  const records = out.toString("latin1").split("\0");
  const paths = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    if (r.startsWith("? ")) paths.push(r.slice(2));
    else if (r.startsWith("1 ")) paths.push(r.split(" ").slice(8).join(" "));
    else if (r.startsWith("2 ")) {
      paths.push(r.split(" ").slice(9).join(" "));
      i++; // the original path follows
    } else if (r.startsWith("u ")) paths.push(r.split(" ").slice(10).join(" "));
  }
  return paths.map((p) => Buffer.from(p, "latin1").toString());
}

/** OpenCode: a separate git dir with its own persistent index (`init` once); `add .`, then `write-tree`. */
export function openCode(root, env, gitDir) {
  const extra = { GIT_DIR: gitDir, GIT_WORK_TREE: root };
  const started = process.hrtime.bigint();
  if (!existsSync(path.join(gitDir, "HEAD"))) git(["init", "-q"], { cwd: root, env, extra });
  git(["config", "core.autocrlf", "false"], { cwd: root, env, extra });
  git(["add", "."], { cwd: root, env, extra });
  git(["write-tree"], { cwd: root, env, extra });
  return { ms: Number(process.hrtime.bigint() - started) / 1e6 };
}
