import { promises as fs } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import type { StoreContext } from "../store/context.js";
import type { DoctorProblem, DoctorRepair } from "../types.js";

/**
 * Ref files of the shadow store whose content is no object id (a disk fault, a hand edit). git
 * skips them ("ignoring broken ref"), so their snapshot drops out of `list` without a word, and a
 * repack refuses to run at all ("bad object"): gc then fails every time and the store only grows.
 */
async function damagedRefFiles(engine: StoreContext): Promise<string[]> {
  if (engine.refs.kind !== "shadow") return []; // the repo store's refs are in the user's repository
  const found: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) await visit(file);
      else if (entry.isFile() && !entry.name.endsWith(".lock")) {
        const text = await fs.readFile(file, "latin1").catch(() => null);
        if (text !== null && !/^[0-9a-f]{40}\n?$/.test(text)) found.push(file);
      }
    }
  };
  await visit(path.join(engine.paths.gitDir, "refs", "ghostcommit"));
  return found;
}

export async function damagedRefProblems(engine: StoreContext): Promise<DoctorProblem[]> {
  return (await damagedRefFiles(engine)).map((file) => ({
    code: "damaged-ref",
    message: `${file} holds no snapshot id: its snapshot is not listed and gc fails until doctor --repair writes it again (its id is its name) or removes it`,
    path: file,
  }));
}

/** Writes a snapshot ref named by an id whose commit is there with that id again; removes the others. */
export async function repairDamagedRefs(engine: StoreContext): Promise<DoctorRepair[]> {
  const done: DoctorRepair[] = [];
  for (const file of await damagedRefFiles(engine)) {
    const id = path.basename(file);
    const commit = /^[0-9a-f]{40}$/.test(id)
      ? await runGit(["cat-file", "-t", id], {
          cwd: engine.paths.dir,
          env: { GIT_DIR: engine.paths.gitDir },
          okCodes: [0, 1, 128],
        }).catch(() => null)
      : null;
    if (commit?.code === 0 && commit.stdout.toString().trim() === "commit") {
      await fs.writeFile(file, `${id}\n`);
      done.push({ code: "rewrote-damaged-ref", message: `wrote ${file} again (snapshot ${id})`, path: file });
    } else {
      await fs.rm(file, { force: true });
      done.push({
        code: "removed-damaged-ref",
        message: `removed ${file}, which named no snapshot`,
        path: file,
      });
    }
  }
  return done;
}
