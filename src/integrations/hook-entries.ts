import { isPlainObject } from "../util/state-files.js";
import { GhostcommitError } from "../errors.js";
import { addMember, type Layout, lastIndexOfKey, layoutOf, nodeAt, removeMember } from "./json-edit.js";
import { type JsonNode, parseJsoncTree } from "./jsonc.js";
import type { Json } from "./settings-file.js";
import { type InstallSpec, isHookCommand } from "./specs.js";

/**
 * The hook entries install adds to an agent's settings text and uninstall removes, as edits of
 * that text alone: each edit is made on the text as the one before left it, parsed anew.
 */

function isOurs(handler: unknown, spec: InstallSpec): boolean {
  return (
    typeof handler === "object" && handler !== null && isHookCommand((handler as Json).command, spec.agent)
  );
}

function handlersOf(entry: unknown): unknown[] | null {
  const hooks = typeof entry === "object" && entry !== null ? (entry as Json).hooks : undefined;
  return Array.isArray(hooks) ? hooks : null;
}

/** How many handlers of ours a hooks list holds. */
export function oursIn(list: unknown, spec: InstallSpec): number {
  if (!Array.isArray(list)) return 0;
  if (spec.style === "flat") return list.filter((h) => isOurs(h, spec)).length;
  return list.reduce(
    (n: number, group) => n + (handlersOf(group)?.filter((h) => isOurs(h, spec)).length ?? 0),
    0,
  );
}

/** True when the list holds exactly `entry` as ours (an older or moved command does not count). */
function hasCurrent(list: unknown[], spec: InstallSpec, entry: unknown): boolean {
  const wanted = JSON.stringify(entry);
  if (spec.style === "flat") return list.some((h) => isOurs(h, spec) && JSON.stringify(h) === wanted);
  return list.some(
    (group) => handlersOf(group)?.some((h) => isOurs(h, spec)) && JSON.stringify(group) === wanted,
  );
}

/**
 * Refuses shapes the agent would not accept either: `hooks` must be an object, our events lists.
 * Other keys are the agent's or the user's (Gemini CLI's `enabled`, `disabled`), kept as they are.
 */
export function checkHooksShape(settings: Json, file: string, spec: InstallSpec): void {
  const hooks = settings.hooks;
  if (hooks === undefined) return;
  if (!isPlainObject(hooks))
    throw new GhostcommitError("bad-config", `${file}: "hooks" is not an object; nothing was changed`, {
      file,
    });
  for (const event of Object.keys(spec.entries(""))) {
    const list = hooks[event];
    if (list !== undefined && !Array.isArray(list))
      throw new GhostcommitError("bad-config", `${file}: hooks.${event} is not a list; nothing was changed`, {
        file,
      });
  }
}

/** Removes our handlers from the list at `keys`, one edit each; groups left empty go too. */
function removeOursAt(text: string, keys: string[], spec: InstallSpec): { text: string; removed: number } {
  let removed = 0;
  for (;;) {
    const list = nodeAt(parseJsoncTree(text), keys) as JsonNode;
    const members = list.members ?? [];
    const at = members.findIndex((m) => oursIn([m.node.value], spec) > 0);
    if (at === -1) return { text, removed };
    const item = members[at].node;
    const handlers = spec.style === "flat" ? null : (handlersOf(item.value) as unknown[]);
    if (handlers === null || handlers.every((h) => isOurs(h, spec))) {
      removed += handlers?.length ?? 1;
      text = removeMember(text, list, at);
    } else {
      const inner = nodeAt(item, ["hooks"]) as JsonNode;
      const index = (inner.members ?? []).findIndex((m) => isOurs(m.node.value, spec));
      removed++;
      text = removeMember(text, inner, index);
    }
  }
}

/**
 * Adds the agent's entries running `command`; entries of ours that differ (an older release's, or
 * a moved Node's) are replaced. Returns the new text and the events that got an entry.
 */
export function addEntries(
  text: string,
  spec: InstallSpec,
  command: string,
  layout: Layout = layoutOf(text, parseJsoncTree(text)),
): { text: string; events: string[] } {
  const entries = Object.entries(spec.entries(command));
  if (!nodeAt(parseJsoncTree(text), ["hooks"])) {
    const hooks = Object.fromEntries(entries.map(([event, entry]) => [event, [entry]]));
    return {
      text: addMember(text, parseJsoncTree(text), "hooks", hooks, layout),
      events: Object.keys(hooks),
    };
  }
  const events: string[] = [];
  for (const [event, entry] of entries) {
    const root = parseJsoncTree(text);
    const list = nodeAt(root, ["hooks", event]);
    if (list === undefined) {
      text = addMember(text, nodeAt(root, ["hooks"]) as JsonNode, event, [entry], layout);
    } else {
      if (hasCurrent(list.value as unknown[], spec, entry)) continue;
      text = removeOursAt(text, ["hooks", event], spec).text;
      text = addMember(
        text,
        nodeAt(parseJsoncTree(text), ["hooks", event]) as JsonNode,
        undefined,
        entry,
        layout,
      );
    }
    events.push(event);
  }
  return { text, events };
}

/** Adds top-level keys first, as the agents' own examples order them (Cursor's `version`). */
export function addKeysFirst(text: string, values: [string, unknown][], layout: Layout): string {
  for (const [key, value] of [...values].reverse())
    text = addMember(text, parseJsoncTree(text), key, value, layout, true);
  return text;
}

/** What install recorded about a file: what uninstall leaves in it. */
export interface KeptByUninstall {
  /** The file had a `hooks` object before install (even an empty one). */
  hadHooks?: boolean;
  /** The events whose lists the file had before install (even empty). */
  userLists?: string[];
}

/**
 * Removes exactly the handlers install adds (recognized by their command), from every list (also
 * an event an older release installed), then the lists and `hooks` object this leaves empty.
 */
export function removeEntries(
  text: string,
  spec: InstallSpec,
  kept: KeptByUninstall = {},
): { text: string; events: string[] } {
  const events: string[] = [];
  const hooks = nodeAt(parseJsoncTree(text), ["hooks"]);
  if (!isPlainObject(hooks?.value)) return { text, events };
  for (const event of Object.keys(hooks.value)) {
    const removal = removeOursAt(text, ["hooks", event], spec);
    if (removal.removed === 0) continue;
    events.push(event);
    text = removal.text;
    const left = nodeAt(parseJsoncTree(text), ["hooks"]) as JsonNode;
    if ((nodeAt(left, [event])?.members?.length ?? 0) === 0 && !kept.userLists?.includes(event))
      text = removeMember(text, left, lastIndexOfKey(left, event));
  }
  const root = parseJsoncTree(text);
  const left = nodeAt(root, ["hooks"]) as JsonNode;
  if (events.length > 0 && (left.members ?? []).length === 0 && !kept.hadHooks)
    text = removeMember(text, root, lastIndexOfKey(root, "hooks"));
  return { text, events };
}

/** Removes the top-level keys install added, when they still hold what it added. */
export function removeKeys(text: string, base: Json, keys: string[]): { text: string; removed: number } {
  let removed = 0;
  for (const key of keys) {
    const root = parseJsoncTree(text);
    const at = lastIndexOfKey(root, key);
    if (at === -1 || JSON.stringify(root.members?.[at].node.value) !== JSON.stringify(base[key])) continue;
    text = removeMember(text, root, at);
    removed++;
  }
  return { text, removed };
}
