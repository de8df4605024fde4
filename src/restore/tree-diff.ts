import { runGit } from "../git/exec.js";
import { missingObjects } from "../git/cat-file.js";
import type { RawChange } from "../git/diff-tree.js";
import { promisedObjectsArgs } from "../store/promisor.js";
import { displayPath, isWithin, type RelPath, relBytes } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import type { StoredSnapshot } from "../store/store.js";
import type { StoredExclusion } from "../store/metadata.js";
import type { DiffEntry } from "../types.js";
import { isNamed } from "./path-filter.js";
import { isFileOnDisk } from "../util/small-files.js";
import { diffTrees } from "./restore-snapshot.js";

/** What each snapshot of a diff left out (its `excluded` paths). */
export interface LeftOut {
  from: RelPath[];
  to: RelPath[];
  /**
   * The second side is the working tree here: a file the capture left out unsaid (ignored since
   * the snapshot) that is still on disk is not deleted either, as a restore leaves it; but not one
   * of `unreadable`, shown deleted (its content unknown) as between snapshots.
   */
  onDisk?: { root: string; unreadable: Set<RelPath> };
}

/**
 * The two trees of a snapshot-to-snapshot diff, with what each left out. Not an unreadable file:
 * a tracked one is shown deleted, its content being unknown (see the README's exclusion table).
 */
export function sides(from: StoredSnapshot, to: StoredSnapshot): [string, string, LeftOut] {
  return [from.tree, to.tree, leftOutOf(from.meta.excluded, to.meta.excluded)];
}

/** What each side of a diff left out, from its `excluded` list (the working tree's capture's too). */
export function leftOutOf(from: StoredExclusion[], to: StoredExclusion[]): LeftOut {
  const paths = (excluded: StoredExclusion[]) =>
    excluded.filter((e) => e.reason !== "unreadable").map((e) => e.path);
  return { from: paths(from), to: paths(to) };
}

/**
 * The raw changes between two trees but those that are only one snapshot leaving a path out (a
 * file grown past the size limit, a directory past the large-dir limit): not captured there is
 * not deleted, nor added (`turn end` does not count them as the turn's change either).
 */
async function capturedChanges(engine: StoreContext, from: string, to: string, leftOut?: LeftOut) {
  const within = (p: RelPath, paths: RelPath[]) => paths.some((e) => isWithin(p, e.replace(/\/$/, "")));
  return (await diffTrees(engine, from, to)).filter(
    (c) =>
      !leftOut ||
      !(
        (c.status === "D" && (within(c.path, leftOut.to) || stillOnDisk(c.path, leftOut.onDisk))) ||
        (c.status === "A" && within(c.path, leftOut.from))
      ),
  );
}

function stillOnDisk(p: RelPath, onDisk: LeftOut["onDisk"]): boolean {
  return onDisk !== undefined && !onDisk.unreadable.has(p) && isFileOnDisk(onDisk.root, p);
}

/** The changes between two trees as the library reports them; `named` limits them to those paths. */
export async function diffEntries(
  engine: StoreContext,
  from: string,
  to: string,
  named?: RelPath[],
  leftOut?: LeftOut,
): Promise<DiffEntry[]> {
  return (await capturedChanges(engine, from, to, leftOut))
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

/**
 * What the user's git config would change in the text (the store's git reads the user's global
 * config): ids abbreviated to the length git picks, blank context lines kept as a space, large
 * files diffed as text, and no attributes file of the user's (`-diff` there made them binary).
 */
const USER_INDEPENDENT_DIFF = [
  "-c",
  "core.abbrev=auto",
  "-c",
  "diff.suppressBlankEmpty=false",
  "-c",
  "core.bigFileThreshold=512m",
  "-c",
  "core.attributesFile=/dev/null",
];

/** The same changes as git prints them: "patch", "stat" or "name-status". */
export async function diffTreesText(
  engine: StoreContext,
  format: "patch" | "stat" | "name-status",
  from: string,
  to: string,
  named?: RelPath[],
  leftOut?: LeftOut,
): Promise<string> {
  const flag = format === "patch" ? "-p" : format === "stat" ? "--stat" : "--name-status";
  const spec = (magic: string, p: RelPath) => `:(${magic})${relBytes(p).toString("utf8")}`;
  // Changes that are only a snapshot leaving a path out are left out of the text too (see capturedChanges).
  const all = leftOut ? await diffTrees(engine, from, to) : [];
  const captured = await capturedChanges(engine, from, to, leftOut);
  const kept = new Set(captured.map((c) => c.path));
  const dropped = all.filter((c) => !kept.has(c.path)).map((c) => spec("exclude,literal", c.path));
  if (dropped.length > 0 && kept.size === 0) return "";
  // Content a partial clone of yours never downloaded (outside its sparse cone) cannot be shown,
  // and nothing here fetches it: those paths are left out, and a line names them.
  const shown = format === "name-status" ? [] : captured.filter((c) => isNamed(c.path, named));
  const unfetched = await notDownloaded(engine, shown);
  const note = unfetched.length
    ? `not shown, their content never downloaded by this partial clone: ${unfetched.map(displayPath).join(", ")}\n`
    : "";
  if (unfetched.length > 0 && unfetched.length === shown.length) return note;
  const pathspecs = [
    ...(named ?? []).map((p) => spec("literal", p)),
    ...dropped,
    ...unfetched.map((p) => spec("exclude,literal", p)),
  ];
  const result = await runGit(
    [
      ...USER_INDEPENDENT_DIFF,
      "diff-tree",
      "-r",
      "--no-renames",
      "--no-color",
      flag,
      from,
      to,
      ...(pathspecs.length ? ["--", ...pathspecs] : []),
    ],
    { cwd: engine.paths.dir, env: { ...engine.readEnv, GIT_LITERAL_PATHSPECS: "0" } },
  );
  return result.stdout.toString("utf8") + note;
}

/** The paths of `changes` whose old or new blob is missing, in a partial clone (else none). */
async function notDownloaded(engine: StoreContext, changes: RawChange[]): Promise<RelPath[]> {
  if (changes.length === 0 || promisedObjectsArgs(engine).length === 0) return [];
  const blob = (mode: string, oid: string) => /^10|^12/.test(mode) && !/^0+$/.test(oid);
  const oids = changes.flatMap((c) => [
    ...(blob(c.oldMode, c.oldOid) ? [c.oldOid] : []),
    ...(blob(c.newMode, c.newOid) ? [c.newOid] : []),
  ]);
  if (oids.length === 0) return [];
  const missing = new Set(await missingObjects(oids, { cwd: engine.paths.dir, env: engine.readEnv }));
  return changes.filter((c) => missing.has(c.oldOid) || missing.has(c.newOid)).map((c) => c.path);
}
