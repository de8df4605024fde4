// A copy of a real repository as a bench tree (`npm run bench -- --repo DIR`): the generated
// trees are shaped like real ones, but a real repository's own attributes, ignore files, file
// sizes and pack are what a user feels. The copy is a local clone of DIR's HEAD (its objects are
// hard-linked, so it costs little disk), given the working state the generated trees get:
// 20 tracked text files edited and 10 new files.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { git } from "./env.mjs";

const OWN_REPO_VERSION = 2;
const EDITED = 20;
const ADDED = 10;
/** Edited files are text files of at most this size, so an edit costs what a source edit costs. */
const MAX_EDITED_BYTES = 256 * 1024;

/** A bad `--repo` argument: reported in one line, without a stack. */
export class BenchUsageError extends Error {}

/** The clone of `source` under `treesDir` at the source's HEAD, in its working state. */
export function ensureRepoTree(source, treesDir, env, log) {
  const abs = path.resolve(source);
  const ask = (args, cwd) => {
    const r = existsSync(cwd) ? git(args, { cwd, env, ok: [0, 1, 128] }) : null;
    return r?.status === 0 ? r.stdout.toString().trim() : null;
  };
  const top = ask(["rev-parse", "--show-toplevel"], abs);
  if (!top) throw new BenchUsageError(`--repo ${source}: not a git work tree`);
  const head = ask(["rev-parse", "--verify", "-q", "HEAD^{commit}"], top);
  if (!head) throw new BenchUsageError(`--repo ${source}: the repository has no commit to copy`);
  const digest = createHash("sha1").update(top).digest("hex").slice(0, 8);
  const name = `repo-${path.basename(top)}-${digest}`;
  const dir = path.join(treesDir, name);
  const root = path.join(dir, "work");
  const marker = path.join(dir, "ready.json");
  const want = JSON.stringify({ OWN_REPO_VERSION, source: top, head });
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== want) {
    log(`cloning ${top} at ${head.slice(0, 12)} ...`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    git(["clone", "-q", "--local", "--no-recurse-submodules", top, root], { env });
    // Files written in the same second as the index are "racily clean": git re-reads them at
    // every status until the index is written again. A user's checkout is long past that.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1100);
    git(["update-index", "-q", "--really-refresh"], { cwd: root, env, ok: [0, 1] });
    const plan = planEdits(root, env);
    // The edited files' bytes as checked out, kept beside the clone: every version is made from them.
    mkdirSync(path.join(dir, "originals"));
    for (const [k, rel] of plan.edited.entries())
      writeFileSync(path.join(dir, "originals", String(k)), readFileSync(path.join(root, rel)));
    writeFileSync(path.join(dir, "plan.json"), JSON.stringify(plan));
    writeFileSync(marker, want);
  }
  const plan = JSON.parse(readFileSync(path.join(dir, "plan.json"), "utf8"));
  plan.originals = plan.edited.map((_, k) => readFileSync(path.join(dir, "originals", String(k))));
  const files = git(["ls-files", "-z"], { cwd: root, env }).stdout.toString().split("\0").length - 1;
  const spec = {
    name,
    kind: "git",
    source: top,
    head,
    files,
    modified: plan.edited.length,
    added: plan.added.length,
  };
  applyRepoWorkingState(root, plan);
  return { spec, root, plan };
}

/**
 * Which tracked files to edit and where to add files: spread evenly over the index (so over the
 * tree's directories), text files only (no NUL in their first 8,000 bytes, as git decides), and
 * new files only where no ignore rule hides them.
 */
function planEdits(root, env) {
  const entries = git(["ls-files", "-s", "-z"], { cwd: root, env })
    .stdout.toString()
    .split("\0")
    .filter(Boolean)
    .map((line) => ({ mode: line.slice(0, 6), path: line.slice(line.indexOf("\t") + 1) }))
    // Editing git's own files would change what is measured (attributes, ignore rules).
    .filter((e) => e.mode === "100644" && !/(^|\/)\.git(attributes|ignore|modules)$/.test(e.path));
  if (entries.length < EDITED) throw new Error(`${root}: fewer than ${EDITED} tracked files`);
  // The k-th pick is the first fit at or after k/count of the way through the index.
  const spread = (count, fits) => {
    const picked = [];
    for (let k = 0; k < count; k++) {
      const start = Math.floor((k * entries.length) / count);
      for (let step = 0; step < entries.length; step++) {
        const found = fits(entries[(start + step) % entries.length].path, picked);
        if (found !== null) {
          picked.push(found);
          break;
        }
      }
    }
    return picked;
  };
  const edited = spread(EDITED, (rel, picked) => {
    if (picked.includes(rel)) return null;
    const original = readOrNull(path.join(root, rel));
    return original && original.length <= MAX_EDITED_BYTES && !original.subarray(0, 8000).includes(0)
      ? rel
      : null;
  });
  const added = spread(ADDED, (near, picked) => {
    const rel = path.posix.join(path.posix.dirname(near), `ghostcommit-bench-new-${picked.length}.txt`);
    return git(["check-ignore", "-q", "--no-index", rel], { cwd: root, env, ok: [0, 1] }).status === 1
      ? rel
      : null;
  });
  return { edited, added };
}

function readOrNull(file) {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}

/** An edited file at `version` (0: the working state): its checked-out bytes plus one line. */
function editedContent(original, version) {
  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const separator = original.length === 0 || original.at(-1) === 0x0a ? "" : eol;
  return Buffer.concat([original, Buffer.from(`${separator}ghostcommit bench edit ${version}${eol}`)]);
}

/** A new file's bytes: ~2 KB of text that no other bench file holds. */
function newContent(k) {
  return Buffer.from(
    `ghostcommit bench new file ${k}\n${"the quick brown fox jumps over the lazy dog\n".repeat(48)}`,
  );
}

/** Edited files at version 0, and the new files. */
function applyRepoWorkingState(root, plan) {
  for (const [k, rel] of plan.edited.entries())
    writeFileSync(path.join(root, rel), editedContent(plan.originals[k], 0));
  for (const [k, rel] of plan.added.entries()) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), newContent(k));
  }
}

/** The bench context of a repository copy (see context.mjs for the generated trees'). */
export function makeRepoContext({ spec, root, plan }, env, scratch) {
  let version = 0;
  return {
    spec,
    root,
    env,
    scratch,
    editedPaths: plan.edited,
    mutate() {
      version++;
      return plan.edited.map((rel, k) => {
        const content = editedContent(plan.originals[k], version);
        writeFileSync(path.join(root, rel), content);
        return content;
      });
    },
    changedContent() {
      return [
        ...plan.edited.map((rel) => readFileSync(path.join(root, rel))),
        ...plan.added.map((_, k) => newContent(k)),
      ];
    },
    tempDir(prefix) {
      return mkdtempSync(path.join(scratch, prefix));
    },
  };
}
