import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { STORE_FILES } from "../store/layout.js";
import { lostLastSafety, type Problem, snapshotsMissingObjects } from "./store-check.js";

/**
 * Doctor's check of the snapshots: each one's commit and the objects it needs, and the latest
 * restore's safety snapshot. `unindexedPack`: a pack git cannot read yet may hold what is missing.
 */
export async function checkSnapshots(engine: StoreContext, unindexedPack = false): Promise<Problem[]> {
  const problems: Problem[] = [];
  const ids = await engine.refs.refIds();
  const { snapshots, unreadable } = await engine.refs.readCommits(ids);
  for (const id of unreadable) {
    problems.push({
      code: "bad-snapshot",
      message: `snapshot ${id} cannot be read (its commit is missing or is not a snapshot); \`doctor --repair\` drops it${unindexedPack ? ", unless the pack it indexes again holds it" : ""}`,
    });
  }
  const missing = await snapshotsMissingObjects(
    engine,
    snapshots.map((s) => s.id),
  );
  for (const [id, oids] of missing) {
    problems.push({
      code: "missing-objects",
      message: `snapshot ${id} cannot be restored: ${oids.length} object(s) it needs are missing (first: ${oids[0]}); \`doctor --repair\` drops it${unindexedPack ? ", unless the pack it indexes again holds them" : ""}`,
    });
  }
  const lost = await lostLastSafety(engine, ids);
  if (lost) {
    problems.push({
      code: "lost-safety-snapshot",
      message: `the safety snapshot of the latest restore, ${lost}, is gone (its ref was removed outside ghostcommit, or a gc ran while that restore did): that restore cannot be undone; \`doctor --repair\` forgets it`,
      path: path.join(engine.paths.dir, STORE_FILES.lastSafety),
    });
  }
  return problems;
}
