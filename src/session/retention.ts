import type { Engine } from "../engine.js";
import type { StoredSnapshot } from "../store/store.js";

/**
 * Snapshots retention must keep whatever the policy says: the newest turn snapshots of every
 * session active in the last day.
 */
export async function protectedSnapshots(_engine: Engine, snapshots: StoredSnapshot[]): Promise<Set<string>> {
  const keep = new Set<string>();
  const dayAgoMicros = (Date.now() - 24 * 3600 * 1000) * 1000;
  const newestPerSession = new Map<string, StoredSnapshot[]>();
  for (const snapshot of snapshots) {
    const session = snapshot.meta.session;
    if (!session || snapshot.meta.t < dayAgoMicros) continue;
    if (snapshot.meta.kind !== "turn-before" && snapshot.meta.kind !== "turn-after") continue;
    const list = newestPerSession.get(session) ?? [];
    list.push(snapshot);
    newestPerSession.set(session, list);
  }
  for (const list of newestPerSession.values()) {
    // snapshots come newest first: keep the newest turn's before and after
    const newestTurn = list[0].meta.turn;
    for (const s of list) if (s.meta.turn === newestTurn) keep.add(s.id);
  }
  return keep;
}
