import { checkIgnoreInput, checkIgnoreName } from "../git/check-ignore.js";
import { GhostcommitError } from "../errors.js";
import { runGit, splitNul } from "../git/exec.js";
import { displayPath, type RelPath, relFromBytes } from "../paths.js";
import { ignoredBySnapshotRules } from "./snapshot-ignores.js";
import type { StoreContext } from "../store/context.js";
import type { StoredSnapshot } from "../store/store.js";
import { humanText, quotedPath } from "../util/format.js";
import { workspaceGhostignore } from "../capture/ghostignore-dirs.js";
import { ignoresCase } from "../capture/conversion.js";
import { ghostignoreMatch } from "../capture/policy.js";

/**
 * Secrets stay home by default: a snapshot may hold files the repository ignores (a touched or
 * force-included `.env`, or one captured before a `.gitignore` line covered it). Lists every such
 * path across the snapshots about to be sent, judged by the repository's rules today and by the
 * snapshot's own `.gitignore` files.
 */
export async function refuseIgnoredContent(engine: StoreContext, snapshots: StoredSnapshot[]): Promise<void> {
  if (engine.location.kind !== "git" || snapshots.length === 0) return;
  const base = await headTree(engine);
  // Only what a snapshot adds to HEAD can be ignored: git's rules never apply to a tracked file
  // (check-ignore leaves those out too), and what HEAD holds is committed anyway.
  const holders = new Map<string, string[]>();
  // Per snapshot tree, the files HEAD lacks: judged by the snapshot's own rules too (see below).
  const added = new Map<string, RelPath[]>();
  for (const snapshot of snapshots) {
    const args = base
      ? ["diff-tree", "-r", "-z", "--name-status", "--no-renames", "--diff-filter=AMT", base, snapshot.tree]
      : ["ls-tree", "-r", "-z", "--name-only", snapshot.tree];
    const listed = splitNul((await runGit(args, { cwd: engine.paths.dir, env: engine.readEnv })).stdout);
    const files = base ? listed.filter((_, i) => i % 2 === 1) : listed;
    const statuses = base ? listed.filter((_, i) => i % 2 === 0).map((b) => b.toString()) : [];
    files.forEach((file, i) => {
      const key = relFromBytes(file);
      holders.set(key, [...(holders.get(key) ?? []), snapshot.id]);
      if (!base || statuses[i] === "A") added.set(snapshot.tree, [...(added.get(snapshot.tree) ?? []), key]);
    });
  }
  if (holders.size === 0) return;
  const ignored = await runGit(["check-ignore", "-z", "--stdin"], {
    cwd: engine.root,
    // check-ignore takes plain path names and rejects the literal-pathspec switch.
    env: { GIT_LITERAL_PATHSPECS: "0" },
    input: checkIgnoreInput([...holders.keys()].map((f) => Buffer.from(f, "latin1"))),
    okCodes: [0, 1],
  });
  const offending = new Map<string, string[]>();
  for (const file of splitNul(ignored.stdout).map(checkIgnoreName)) {
    offending.set(displayPath(relFromBytes(file)), holders.get(file.toString("latin1")) ?? []);
  }
  // What a `.ghostignore` keeps out today (one written since the snapshot, or put back by a
  // rewind of the agent's deleting it): no weaker at a push than a `.gitignore` line.
  const rules = await workspaceGhostignore(
    engine.location,
    engine.paths.dir,
    await ignoresCase(engine.location, engine.paths.dir),
    [...holders.keys()],
  );
  for (const [file, ids] of holders) {
    if (ghostignoreMatch(file, rules?.matcher ?? null) !== null) offending.set(displayPath(file), ids);
  }
  // Ignored when captured, by a rule no longer in the work tree (its folder deleted since, or a
  // clone that fetched the session without it): the snapshot's own `.gitignore` files say so.
  for (const file of await ignoredBySnapshotRules(engine, added)) {
    offending.set(displayPath(file), holders.get(file) ?? []);
  }
  if (offending.size === 0) return;
  const paths = [...offending.keys()].sort();
  const shown = paths.slice(0, 10).map(quotedPath).join(", ") + (paths.length > 10 ? ", …" : "");
  const ids = [...new Set([...offending.values()].flat())];
  throw new GhostcommitError(
    "conflict",
    `push refused: snapshots hold ${paths.length} ${paths.length === 1 ? "file" : "files"} the repository or a .ghostignore ignores (${shown}), in ${heldBy(ids, snapshots)}; nothing was sent, ${engine.optionNames.includeIgnored} sends them`,
    { conflicts: paths, snapshots: ids },
  );
}

/**
 * The snapshots holding them, a few named with what they are ("1a2b3c4d5e6f (after turn 2 of
 * session s)", "… (safety before restore)"): a person sees which to look at, or drop.
 */
function heldBy(ids: string[], snapshots: StoredSnapshot[]): string {
  const named = ids.slice(0, 3).map((id) => {
    const meta = snapshots.find((s) => s.id === id)?.meta;
    const turn = meta?.turn !== undefined && meta.session !== undefined;
    const what =
      turn && (meta.kind === "turn-before" || meta.kind === "turn-after")
        ? `${meta.kind === "turn-before" ? "before" : "after"} turn ${humanText(meta.turn!)} of session ${humanText(meta.session!)}`
        : meta?.message
          ? humanText(meta.message)
          : "";
    return what ? `${id.slice(0, 12)} (${what})` : id.slice(0, 12);
  });
  const more = ids.length > 3 ? `, and ${ids.length - 3} more` : "";
  return `${ids.length === 1 ? "snapshot" : "snapshots"} ${named.join(", ")}${more}`;
}

/** The tree HEAD holds at the workspace's root (a subdirectory workspace's own), or null (unborn). */
async function headTree(engine: StoreContext): Promise<string | null> {
  // `./` is relative to the directory git runs in: the workspace root, wherever it is in the repository.
  const result = await runGit(["rev-parse", "--verify", "-q", "HEAD:./"], {
    cwd: engine.root,
    env: { GIT_LITERAL_PATHSPECS: "0" },
    okCodes: [0, 1, 128],
  });
  const oid = result.stdout.toString().trim();
  return result.code === 0 && /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
}
