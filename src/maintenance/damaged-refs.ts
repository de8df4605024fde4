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

/**
 * The refs that keep sessions a fetch brought or a push sent (`remote-sessions/`) whose commits,
 * or the journals in them, are missing (objects lost with a damaged pack). A repack walks them
 * as it walks snapshots, so every gc fails ("bad object"), and so does every fetch. They are only
 * a copy of the remote's: removed, the next fetch brings them back.
 */
async function danglingSessionRefs(engine: StoreContext): Promise<{ ref: string; id: string }[]> {
  const prefix = engine.refs.refPrefix.replace(/snapshots\/$/, "remote-sessions/");
  const git = (args: string[], input?: string) =>
    runGit(args, {
      cwd: engine.paths.dir,
      env: { ...engine.readEnv, GIT_DIR: engine.refs.refsGitDir },
      input,
      okCodes: [0, 128],
    });
  const listed = await git(["for-each-ref", "--format=%(objectname) %(refname)", prefix]);
  const refs = listed.stdout
    .toString("utf8")
    .split("\n")
    .flatMap((line) => {
      const match = /^([0-9a-f]{40}) (.+)$/.exec(line);
      return match ? [{ id: match[1], ref: match[2] }] : [];
    });
  const whole = async (ids: string[]) => {
    const walked = await git(["rev-list", "--objects", "--missing=print", "--stdin"], `${ids.join("\n")}\n`);
    return walked.code === 0 && !/^\?/m.test(walked.stdout.toString("latin1"));
  };
  if (refs.length === 0 || (await whole(refs.map((r) => r.id)))) return [];
  const dangling = [];
  for (const ref of refs) if (!(await whole([ref.id]))) dangling.push(ref);
  return dangling;
}

export async function danglingSessionRefProblems(engine: StoreContext): Promise<DoctorProblem[]> {
  return (await danglingSessionRefs(engine)).map(({ ref, id }) => ({
    code: "dangling-session-ref",
    message: `${ref} keeps a session copied from or to a remote whose objects are missing (commit ${id} or what it holds): gc and fetch fail on it until \`doctor --repair\` removes it; the next fetch brings the session back from the remote`,
  }));
}

/** Removes the session refs whose objects are missing (see `danglingSessionRefs`). */
export async function repairDanglingSessionRefs(engine: StoreContext): Promise<DoctorRepair[]> {
  const dangling = await danglingSessionRefs(engine);
  if (dangling.length === 0) return [];
  await runGit(["update-ref", "--stdin", "-z"], {
    cwd: engine.paths.dir,
    env: { ...engine.readEnv, GIT_DIR: engine.refs.refsGitDir },
    input: dangling.map(({ ref }) => `delete ${ref}\0\0`).join(""),
  });
  return dangling.map(({ ref }) => ({
    code: "removed-dangling-session-ref" as const,
    message: `removed ${ref}, whose session's objects are missing; the next fetch brings it back`,
  }));
}
