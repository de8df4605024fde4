import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { displayPath, isWithin, type RelPath, relFromText } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import { workspaceDir } from "../store/layout.js";
import { keyOf } from "../git/repository.js";
import { makeDirs } from "../util/make-dirs.js";
import { namesIn } from "../util/small-files.js";
import { writeFileAtomic } from "../util/state-files.js";
import { sessionsAround } from "./journal.js";
import type { SessionState, TurnState } from "./model.js";

/*
 * A repository's subdirectory is a workspace of its own, with its own store and sessions (an agent
 * started there). Its files are the repository root's files too: a session at the root and one
 * in the subdirectory run beside each other as two sessions of one workspace do, and must see
 * each other's turns, or one's rewind reverts the other's work unwarned. Each git workspace that
 * begins a turn registers in its work tree's directory, so the others find its journals.
 */

/** Where the workspaces of one work tree register: a file per workspace, holding its prefix. */
function registryDir(engine: StoreContext): string | null {
  const { location } = engine;
  if (location.kind !== "git") return null;
  return path.join(dataHome(), "worktrees", keyOf(location.worktreeRoot!, location.gitDir!));
}

/** Registers this workspace beside the others of its work tree (once: one stat a turn after that). */
export async function registerWorkspace(engine: StoreContext): Promise<void> {
  const dir = registryDir(engine);
  if (!dir) return;
  const file = path.join(dir, engine.location.key);
  if (existsSync(file)) return;
  makeDirs(dir);
  await writeFileAtomic(
    file,
    `${JSON.stringify({ prefix: displayPath(engine.location.prefix) })}\n`,
    0o600,
    false,
  );
}

/**
 * Other sessions whose turns may have run beside a turn that began at `startedAt` (microseconds):
 * this workspace's (but `exceptFile`'s), and those of the workspaces of the same work tree above
 * or below it, their paths seen from this workspace.
 */
export async function journalsAround(
  engine: StoreContext,
  startedAt: number,
  exceptFile: string,
): Promise<SessionState[]> {
  const own = await sessionsAround(engine.paths.sessionsDir, startedAt, path.basename(exceptFile));
  const dir = registryDir(engine);
  if (!dir) return own;
  const here = engine.location.prefix;
  for (const key of namesIn(dir)) {
    if (key === engine.location.key || key.includes(".")) continue; // itself, or a temp file
    let there: RelPath;
    try {
      there = relFromText(JSON.parse(readFileSync(path.join(dir, key), "utf8")).prefix);
    } catch {
      continue; // torn or foreign: not a registration
    }
    const toHere = pathMap(there, here);
    if (!toHere) continue;
    const sessions = await sessionsAround(path.join(workspaceDir(key), "sessions"), startedAt, "");
    for (const state of sessions) own.push(seenFrom(state, toHere));
  }
  return own;
}

/** Maps paths of the workspace at `from` to the workspace at `to` (prefixes in one work tree); null when neither holds the other. */
function pathMap(from: RelPath, to: RelPath): ((p: RelPath) => RelPath | null) | null {
  if (from === to || !(isWithin(to, from) || isWithin(from, to))) return null;
  return (p) => {
    const full = from === "" ? p : `${from}/${p}`;
    if (to === "") return full;
    return full.startsWith(`${to}/`) ? full.slice(to.length + 1) : null;
  };
}

/**
 * Another workspace's session as this one's attribution reads it: the paths its turns and undos
 * touched, in this workspace's terms (those outside it dropped). Its snapshots are in its own
 * store, rooted elsewhere, so none is named: nothing is proven settled by them.
 */
function seenFrom(state: SessionState, map: (p: RelPath) => RelPath | null): SessionState {
  const paths = (list: Iterable<RelPath>) => [...list].flatMap((p) => map(p) ?? []);
  const seen = (turn: TurnState): TurnState => ({
    ...turn,
    after: null,
    progress: undefined,
    marks: [],
    changed: paths(turn.changed),
    touched: new Set(paths(turn.touched)),
    touchTimes: new Map(
      [...turn.touchTimes].flatMap(([p, times]) => paths([p]).map((q) => [q, times] as const)),
    ),
    beforeAbsent: new Set(paths(turn.beforeAbsent)),
    beforeUnknown: new Set(paths(turn.beforeUnknown)),
    uncertain: new Set(paths(turn.uncertain)),
    rewoundPaths: new Map(),
  });
  return {
    ...state,
    turns: state.turns.map(seen),
    unbegun: state.unbegun && seen(state.unbegun),
    touched: new Set(paths(state.touched)),
    redoStack: [],
    rewinds: new Map(),
    redos: [],
    undos: state.undos.map((undo) => ({ t: undo.t, paths: paths(undo.paths) })),
  };
}
