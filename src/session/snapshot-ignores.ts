import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkIgnoreInput, checkIgnoreName } from "../git/check-ignore.js";
import { runGit, splitNul } from "../git/exec.js";
import { MODE } from "../git/objects.js";
import { TreeLookup } from "../git/tree-lookup.js";
import { ancestorsOf, fsPath, isCleanRel, type RelPath, relBytes, relFromBytes } from "../paths.js";
import type { StoreContext } from "../store/context.js";

/**
 * Of the files each snapshot holds (`filesOf`: snapshot tree -> its candidate files), those its
 * own `.gitignore` files ignore: a secret captured while ignored (a touched `.env`) stays a secret
 * once the rule is gone from the work tree (its folder deleted, a clone that never checked it out).
 * Only the `.gitignore` files on the way to a candidate are read; snapshots that share them are
 * judged in one `check-ignore`, against a scratch directory holding just those files.
 */
export async function ignoredBySnapshotRules(
  engine: StoreContext,
  filesOf: Map<string, RelPath[]>,
): Promise<Set<RelPath>> {
  // By the `.gitignore` files (path -> blob id) on the way to the candidates: their contents, and the candidates.
  const byRules = new Map<
    string,
    { blobs: Map<RelPath, string>; rules: Map<RelPath, Buffer>; files: Set<RelPath> }
  >();
  const above = await rulesAboveWorkspace(engine);
  await engine.withReader(async (cat) => {
    const lookup = new TreeLookup(cat);
    for (const [tree, files] of filesOf) {
      const blobs = new Map<RelPath, string>();
      for (const dir of new Set(["", ...files.flatMap((f) => ancestorsOf(f))])) {
        const file = dir === "" ? ".gitignore" : `${dir}/.gitignore`;
        const entry = await lookup.entry(tree, file);
        if (entry && entry.mode !== MODE.tree && entry.mode !== MODE.gitlink) blobs.set(file, entry.oid);
      }
      if (blobs.size === 0 && above.size === 0) continue;
      const key = [...blobs].sort().join("\n");
      const group = byRules.get(key) ?? { blobs, rules: new Map(), files: new Set() };
      for (const f of files) group.files.add(f);
      byRules.set(key, group);
    }
    for (const group of byRules.values()) {
      for (const [file, oid] of group.blobs) group.rules.set(file, await cat.readExpect(oid, "blob"));
    }
  });
  const ignored = new Set<RelPath>();
  // A subdirectory's workspace is judged where it is in the repository, below the rules above it.
  const prefix = engine.location.prefix;
  const inRepository = (rel: RelPath) => (prefix === "" ? rel : `${prefix}/${rel}`);
  for (const { rules, files } of byRules.values()) {
    const all = new Map([...above, ...[...rules].map(([f, c]) => [inRepository(f), c] as const)]);
    for (const f of await judge(engine, all, [...files].map(inRepository)))
      ignored.add(prefix === "" ? f : f.slice(prefix.length + 1));
  }
  return ignored;
}

/** `files` a scratch work tree holding only `rules` (path -> content) ignores, by git's own matching. */
async function judge(
  engine: StoreContext,
  rules: Map<RelPath, Buffer>,
  files: RelPath[],
): Promise<RelPath[]> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "ghostcommit-rules-"));
  try {
    const parent = (rel: RelPath) => rel.slice(0, Math.max(0, rel.lastIndexOf("/")));
    // The candidates' folders exist, as they did: a rule for a folder (`certs/`) matches only one.
    for (const dir of new Set([...rules.keys(), ...files].filter(isCleanRel).map(parent)))
      if (dir !== "") await fs.mkdir(fsPath(scratch, dir), { recursive: true });
    for (const [file, content] of rules) {
      if (isCleanRel(file)) await fs.writeFile(fsPath(scratch, file), content);
    }
    // --no-index: whether git tracks a path here is not the question, only what the rules say.
    const result = await runGit(["--work-tree", scratch, "check-ignore", "--no-index", "-z", "--stdin"], {
      cwd: scratch,
      env: { ...engine.readEnv, GIT_LITERAL_PATHSPECS: "0" },
      input: checkIgnoreInput(files.filter(isCleanRel).map(relBytes)),
      okCodes: [0, 1],
    });
    return splitNul(result.stdout).map((name) => relFromBytes(checkIgnoreName(name)));
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/**
 * For a subdirectory's workspace, the `.gitignore` files of the folders above it as the
 * repository's HEAD commits them (its snapshots hold none of them): a rule there that ignored a
 * captured secret still counts once it is gone from the work tree.
 */
async function rulesAboveWorkspace(engine: StoreContext): Promise<Map<RelPath, Buffer>> {
  const rules = new Map<RelPath, Buffer>();
  const { prefix, worktreeRoot } = engine.location;
  if (engine.location.kind !== "git" || prefix === "" || !worktreeRoot) return rules;
  for (const dir of ["", ...ancestorsOf(prefix)]) {
    const file = dir === "" ? ".gitignore" : `${dir}/.gitignore`;
    const shown = await runGit(["cat-file", "blob", `HEAD:${relBytes(file).toString("utf8")}`], {
      cwd: worktreeRoot,
      env: { GIT_LITERAL_PATHSPECS: "0" },
      okCodes: [0, 128],
    });
    if (shown.code === 0) rules.set(file, shown.stdout);
  }
  return rules;
}
