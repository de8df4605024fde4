import { runGit } from "../git/exec.js";
import { displayPath, type RelPath, relBytes } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import type { DiffEntry } from "../types.js";
import { isNamed } from "./path-filter.js";
import { diffTrees } from "./restore-snapshot.js";

/** The changes between two trees as the library reports them; `named` limits them to those paths. */
export async function diffEntries(
  engine: StoreContext,
  from: string,
  to: string,
  named?: RelPath[],
): Promise<DiffEntry[]> {
  return (await diffTrees(engine, from, to))
    .filter((c) => isNamed(c.path, named))
    .map((c) => {
      const status: DiffEntry["status"] =
        c.status === "A"
          ? "added"
          : c.status === "D"
            ? "deleted"
            : c.status === "T"
              ? "type-changed"
              : "modified";
      const entry: DiffEntry = { path: displayPath(c.path), status };
      if (c.status !== "A") entry.oldMode = c.oldMode;
      if (c.status !== "D") entry.newMode = c.newMode;
      return entry;
    });
}

/** The same changes as git prints them: "patch", "stat" or "name-status". */
export async function diffTreesText(
  engine: StoreContext,
  format: "patch" | "stat" | "name-status",
  from: string,
  to: string,
  named?: RelPath[],
): Promise<string> {
  const flag = format === "patch" ? "-p" : format === "stat" ? "--stat" : "--name-status";
  const pathspecs = named ? ["--", ...named.map((p) => relBytes(p).toString("utf8"))] : [];
  const result = await runGit(
    ["diff-tree", "-r", "--no-renames", "--no-color", flag, from, to, ...pathspecs],
    {
      cwd: engine.paths.dir,
      env: engine.readEnv,
    },
  );
  return result.stdout.toString("utf8");
}
