import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import type { DoctorCheck } from "./doctor.js";

/**
 * Doctor check: files in the store that belong to another user, as a run as root with this user's
 * data directory left them (before ghostcommit refused that). This user cannot write in such a
 * directory, nor read such an object or journal: snapshots fail on them, one by one.
 */
export const checkForeignOwned: DoctorCheck = async (engine: StoreContext) => {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return []; // root can change them all
  const foreign: { file: string; owner: number }[] = [];
  let unlisted = false;
  const visit = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      unlisted = true; // unreadable (counted, if foreign), or gone meanwhile
      return;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      let stat: ReturnType<typeof lstatSync>;
      try {
        stat = lstatSync(file);
      } catch {
        continue;
      }
      if (stat.uid !== uid) foreign.push({ file, owner: stat.uid });
      if (stat.isDirectory()) visit(file);
    }
  };
  visit(engine.paths.dir);
  if (foreign.length === 0) return [];
  const owners = [...new Set(foreign.map((f) => f.owner))].join(", ");
  const gid = process.getgid?.() ?? uid;
  return [
    {
      code: "store-not-writable",
      message: `${unlisted ? "at least " : ""}${foreign.length} file(s) in the store belong to another user (uid ${owners}; a run as root with your data directory, such as \`sudo -E\`, leaves them), first ${foreign[0].file}: snapshots fail on them until they are yours again: \`sudo chown -R ${uid}:${gid} ${engine.paths.dir}\``,
      path: foreign[0].file,
    },
  ];
};
