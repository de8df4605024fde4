import type { TreeLookup } from "../git/tree-lookup.js";
import { displayPath, type RelPath } from "../paths.js";

/**
 * What each file a forced rewind or redo overwrites holds when it is planned: `mode oid`, or
 * `absent`, by the path it is shown as. A dry run reports it beside `overridden`; the confirmation
 * sends it back, so a file edited again after the person saw it listed is not overwritten unseen
 * (its name alone would still match).
 */
export type OverriddenState = Record<string, string>;

export async function overriddenStates(
  paths: RelPath[],
  currentTree: string,
  lookup: TreeLookup,
): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for (const p of paths) {
    const state = await lookup.file(currentTree, p);
    states.set(displayPath(p), state ? `${state.mode} ${state.oid}` : "absent");
  }
  return states;
}

/** The states of `shown` (the files the report names as overwritten). */
export function stateOfShown(states: Map<string, string>, shown: string[]): OverriddenState {
  return Object.fromEntries(shown.flatMap((p) => (states.has(p) ? [[p, states.get(p)!]] : [])));
}

/** Of the files the caller saw with their states, those that hold something else now. */
export function changedSinceShown(
  expected: OverriddenState | undefined,
  now: Map<string, string>,
  overwrote: string[],
): string[] {
  if (!expected) return [];
  return overwrote.filter((p) => expected[p] !== undefined && expected[p] !== now.get(p));
}

/** Whether `value` may be an `overriddenState` sent back by a caller (absent, or strings by path). */
export function isStateMap(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((state) => typeof state === "string");
}
