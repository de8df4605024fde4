import { promises as fs } from "node:fs";
import path from "node:path";
import { GhostcommitError } from "../errors.js";
import { CatFile } from "../git/cat-file.js";
import { runGit } from "../git/exec.js";
import { parseTree } from "../git/objects.js";
import { quotedPath } from "../util/format.js";

/** The pack files in a git directory now: what a fetch adds to it is its new ones. */
export async function packsIn(gitDir: string): Promise<Set<string>> {
  const names = await fs.readdir(path.join(gitDir, "objects", "pack")).catch(() => [] as string[]);
  return new Set(names.filter((name) => name.endsWith(".idx")));
}

/**
 * Refuses what a fetch received when one of its trees has an entry a checkout must never write:
 * `..` or `.` (a restore of it would write beside the workspace), a name holding `/` or a NUL, an
 * empty one. No snapshot holds such a tree; a forged or damaged remote can. Only the trees of the
 * packs the fetch added are read (the fetch keeps its packs as received): git's own `fsck` on
 * receipt would also refuse names git warns of (`.GIT`, a legal file name here) and old objects of
 * the repository's history (zero-padded modes), which a fetch must take.
 */
export async function refuseUnsafeTrees(gitDir: string, before: Set<string>, url: string): Promise<void> {
  const packDir = path.join(gitDir, "objects", "pack");
  const added = [...(await packsIn(gitDir))].filter((name) => !before.has(name));
  if (added.length === 0) return;
  const env = { GIT_DIR: gitDir };
  const ids: string[] = [];
  for (const name of added) {
    const index = await fs.readFile(path.join(packDir, name));
    const listed = await runGit(["show-index"], { cwd: gitDir, env, input: index });
    for (const line of listed.stdout.toString("latin1").split("\n")) {
      const oid = line.split(" ")[1];
      if (oid) ids.push(oid);
    }
  }
  if (ids.length === 0) return;
  const types = await runGit(["cat-file", "--batch-check=%(objectname) %(objecttype)"], {
    cwd: gitDir,
    env,
    input: `${ids.join("\n")}\n`,
  });
  const trees = types.stdout
    .toString("latin1")
    .split("\n")
    .filter((line) => line.endsWith(" tree"))
    .map((line) => line.slice(0, line.indexOf(" ")));
  const cat = new CatFile(gitDir, env);
  try {
    for (const tree of trees) {
      const unsafe = parseTree(await cat.readExpect(tree, "tree"), { hexIds: false }).find((e) =>
        unsafeName(e.name),
      );
      if (!unsafe) continue;
      throw new GhostcommitError(
        "store-damaged",
        `fetch from ${url} refused: tree ${tree} it sent names ${quotedPath(unsafe.name)}, which would be written outside the workspace or nowhere (forged or damaged); nothing was fetched`,
        { oid: tree },
      );
    }
  } finally {
    cat.close();
  }
}

function unsafeName(name: string): boolean {
  return name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0");
}
