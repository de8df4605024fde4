import type { SnapshotSummary, TurnRecord, Workspace } from "../index.js";
import { countLines, type FilePatch, type LineCounts, parsePatch } from "./patch.js";

export interface TimelineSession {
  session: string;
  updatedAt: string;
  /** `redo` has something to bring back: a rewind (of whole turns or of chosen paths) not yet redone. */
  redoable: boolean;
  /** The turns `redo` brings back (null: none); the page's Redo sends them as what it showed. */
  redoTurns: string[] | null;
  /** The paths `redo` brings back when its rewind was of chosen paths (null: whole turns, or none). */
  redoPaths: string[] | null;
  /** Newest first. */
  turns: TurnRecord[];
}

export interface Timeline {
  root: string;
  /** Newest first. */
  sessions: TimelineSession[];
  /** Snapshots that belong to no turn (by hand, or safety snapshots of a restore), newest first. */
  snapshots: SnapshotSummary[];
}

export async function readTimeline(ws: Workspace): Promise<Timeline> {
  const summaries = await ws.sessions();
  const sessions = await Promise.all(
    summaries.map(async (summary): Promise<TimelineSession> => {
      const session = ws.session(summary.session);
      const [turns, redoTurns, redoPaths] = await Promise.all([
        session.log({ gone: true }),
        session.nextRedo(),
        session.nextRedoPaths(),
      ]);
      return {
        session: summary.session,
        updatedAt: summary.updatedAt,
        redoable: redoTurns !== null,
        redoTurns,
        redoPaths,
        turns: turns.reverse(),
      };
    }),
  );
  const snapshots = (await ws.list()).filter((s) => s.kind === "snapshot" || s.kind === "safety");
  return { root: ws.root, sessions, snapshots };
}

export interface DiffView {
  from: string;
  /** null: the working tree now. */
  to: string | null;
  files: FilePatch[];
}

/**
 * Diffs and line counts between snapshots. Snapshots never change, so results between two
 * snapshots are cached; a diff against the working tree is computed each time.
 */
export class DiffCache {
  private readonly counts = new Map<string, LineCounts>();
  private readonly views = new Map<string, DiffView>();

  constructor(
    private readonly ws: Workspace,
    private readonly maxViews = 16,
  ) {}

  async view(from: string, to: string | null): Promise<DiffView> {
    await this.forgetGone(this.views);
    const key = `${from}..${to ?? ""}`;
    const cached = this.views.get(key);
    if (cached) return cached;
    // One capture of the working tree for both: parsePatch pairs them by position.
    const { entries, patch } = await this.ws.diffWithPatch(from, to ?? undefined);
    const view: DiffView = { from, to, files: parsePatch(entries, patch) };
    if (to !== null) {
      this.views.set(key, view);
      if (this.views.size > this.maxViews) this.views.delete(this.views.keys().next().value as string);
    }
    return view;
  }

  /**
   * Forgets the results of pairs a snapshot of which was dropped or expired since: snapshots
   * never change, but they do go, and a gone turn has no counts and no diff.
   */
  async forgetGone(cache: Map<string, unknown>): Promise<void> {
    if (cache.size === 0) return;
    const live = new Set((await this.ws.list()).map((s) => s.id));
    const isLive = (id: string) => id === "" || live.has(id) || [...live].some((full) => full.startsWith(id));
    for (const key of [...cache.keys()]) if (!key.split("..").every(isLive)) cache.delete(key);
  }

  /** Call once per request, before `lineCounts`. */
  forgetGoneCounts(): Promise<void> {
    return this.forgetGone(this.counts);
  }

  async lineCounts(from: string, to: string): Promise<LineCounts> {
    const key = `${from}..${to}`;
    let counts = this.counts.get(key);
    if (!counts) {
      counts = countLines(await this.ws.diffText("patch", from, to));
      this.counts.set(key, counts);
    }
    return counts;
  }
}
