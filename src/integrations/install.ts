import { promises as fs } from "node:fs";
import path from "node:path";
import { dataHome } from "../config.js";
import { GhostcommitError } from "../errors.js";
import { readJson, writeFileAtomic } from "../store/layout.js";
import { makeDirsAsync } from "../util/make-dirs.js";
import { type Json, type Loaded, load, refuseRewrite, save, target } from "./settings-file.js";
import { type InstallSpec, isHookCommand, type Scope } from "./specs.js";

/** The result of `install <agent>`. */
export interface InstallReport {
  agent: string;
  scope: Scope;
  file: string;
  /** False when every entry was already there (the file is not rewritten). */
  changed: boolean;
  /** True when install created the file. */
  created: boolean;
  /** Events that got an entry. */
  events: string[];
}

/** The result of `uninstall <agent>`. */
export interface UninstallReport {
  agent: string;
  scope: Scope;
  file: string;
  changed: boolean;
  /** True when the file was removed (install had created it and nothing else is left). */
  deleted: boolean;
  /** Events an entry was removed from. */
  events: string[];
}

/** What install did to a file beyond adding hooks, so uninstall can undo exactly that. */
interface InstallRecord {
  created?: boolean;
  createdDirs?: string[];
  addedKeys?: string[];
  /** The file had a `hooks` object before install (even an empty one): uninstall leaves it. */
  hadHooks?: boolean;
  /** The events whose lists the file had before install (even empty): uninstall leaves them. */
  userLists?: string[];
}

function recordsFile(): string {
  return path.join(dataHome(), "installs.json");
}

async function updateRecord(file: string, record: InstallRecord | null): Promise<void> {
  const records = await readJson<Record<string, InstallRecord>>(recordsFile(), {});
  if (record) records[file] = record;
  else delete records[file];
  await makeDirsAsync(path.dirname(recordsFile()));
  await writeFileAtomic(recordsFile(), `${JSON.stringify(records, null, 2)}\n`);
}

/**
 * The `hooks` object, refusing shapes the agent would not accept either: our events must be lists.
 * Other keys are the agent's or the user's (Gemini CLI's `enabled`, `disabled`), kept as they are.
 */
function hooksOf(settings: Json, file: string, spec: InstallSpec, create: boolean): Json | undefined {
  const hooks = settings.hooks;
  if (hooks === undefined) {
    if (!create) return undefined;
    settings.hooks = {};
    return settings.hooks as Json;
  }
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)) {
    throw new GhostcommitError("bad-config", `${file}: "hooks" is not an object; nothing was changed`, {
      file,
    });
  }
  for (const event of Object.keys(spec.entries(""))) {
    const list = (hooks as Json)[event];
    if (list !== undefined && !Array.isArray(list)) {
      throw new GhostcommitError("bad-config", `${file}: hooks.${event} is not a list; nothing was changed`, {
        file,
      });
    }
  }
  return hooks as Json;
}

function isOurs(handler: unknown, spec: InstallSpec): boolean {
  return (
    typeof handler === "object" && handler !== null && isHookCommand((handler as Json).command, spec.agent)
  );
}

function handlersOf(entry: unknown): unknown[] | null {
  const hooks = typeof entry === "object" && entry !== null ? (entry as Json).hooks : undefined;
  return Array.isArray(hooks) ? hooks : null;
}

/** True when the list holds exactly `entry` as ours (an older or moved command does not count). */
function hasCurrent(list: unknown[], spec: InstallSpec, entry: unknown): boolean {
  const wanted = JSON.stringify(entry);
  if (spec.style === "flat") return list.some((h) => isOurs(h, spec) && JSON.stringify(h) === wanted);
  return list.some(
    (group) => handlersOf(group)?.some((h) => isOurs(h, spec)) && JSON.stringify(group) === wanted,
  );
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a hooks list holds an entry of ours. */
function holdsOurs(spec: InstallSpec): (list: unknown) => boolean {
  return (list) => Array.isArray(list) && removeOurs(structuredClone(list), spec) > 0;
}

/** Removes our handlers from an event list; groups this leaves empty go too. Returns the count. */
function removeOurs(list: unknown[], spec: InstallSpec): number {
  let removed = 0;
  for (let i = list.length - 1; i >= 0; i--) {
    if (spec.style === "flat") {
      if (isOurs(list[i], spec)) {
        list.splice(i, 1);
        removed++;
      }
      continue;
    }
    const handlers = handlersOf(list[i]);
    if (!handlers) continue;
    const kept = handlers.filter((h) => !isOurs(h, spec));
    if (kept.length === handlers.length) continue;
    removed += handlers.length - kept.length;
    if (kept.length === 0) list.splice(i, 1);
    else (list[i] as Json).hooks = kept;
  }
  return removed;
}

/** Directories mkdir -p would create for `dir`, outermost first. */
async function missingDirs(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    const exists = await fs.stat(d).then(
      () => true,
      () => false,
    );
    if (exists || path.dirname(d) === d) break;
    missing.unshift(d);
  }
  return missing;
}

/**
 * For a settings file with comments, which install (`command`) and uninstall refuse to rewrite: how
 * the user can do it instead. Undefined for agents whose files cannot have comments.
 */
function byHand(spec: InstallSpec, command?: string): string | undefined {
  if (!spec.comments) return undefined;
  if (command === undefined)
    return `Remove them and run uninstall again, or remove the hooks whose command ends in \`hook ${spec.agent}\` yourself`;
  const lists = Object.entries(spec.entries(command)).map(([event, entry]) => [event, [entry]]);
  return `Remove them and run install again, or add these entries to the lists under "hooks" yourself:\n${JSON.stringify(Object.fromEntries(lists), null, 2)}`;
}

/**
 * Merges the agent's hook entries running `command` into its settings file; entries of ours that
 * differ (an older release's, or a moved Node's) are replaced. Running it twice changes nothing.
 */
export async function install(
  spec: InstallSpec,
  scope: Scope,
  projectDir: string,
  command: string,
): Promise<InstallReport> {
  const file = target(spec.file(scope, projectDir));
  const loaded = (await load(file, byHand(spec, command))) ?? null;
  const current: Loaded = loaded ?? { value: {}, indent: 2 };
  const settings = current.value;
  // The user's own `hooks` object and lists, even empty ones, stay after uninstall; one holding
  // entries of ours is a former install's.
  const lists = isObject(settings.hooks) ? Object.entries(settings.hooks) : [];
  const withOurs = new Set(lists.filter(([, list]) => holdsOurs(spec)(list)).map(([event]) => event));
  const hadHooks = isObject(settings.hooks) && withOurs.size === 0;
  const userEvents = lists
    .filter(([event, list]) => Array.isArray(list) && !withOurs.has(event))
    .map(([event]) => event);
  const hooks = hooksOf(settings, file, spec, true) as Json;
  const events: string[] = [];
  for (const [event, entry] of Object.entries(spec.entries(command))) {
    const list = (hooks[event] as unknown[] | undefined) ?? [];
    if (hasCurrent(list, spec, entry)) continue;
    removeOurs(list, spec);
    list.push(structuredClone(entry));
    hooks[event] = list;
    events.push(event);
  }
  const report: InstallReport = { agent: spec.agent, scope, file, changed: false, created: false, events };
  if (loaded && events.length === 0) return report;
  if (loaded) refuseRewrite(file, loaded);
  const addedKeys = Object.keys(spec.base).filter((key) => !(key in settings));
  // Base keys first, as the agents' own examples order them.
  current.value = { ...Object.fromEntries(addedKeys.map((k) => [k, spec.base[k]])), ...settings };
  const createdDirs = await missingDirs(path.dirname(file));
  await fs.mkdir(path.dirname(file), { recursive: true });
  await save(file, loaded ? { ...current, stat: loaded.stat } : current);
  if (!loaded || addedKeys.length > 0 || hadHooks || userEvents.length > 0) {
    const previous = await readJson<Record<string, InstallRecord>>(recordsFile(), {});
    // A file made now owes nothing to a record of one that was removed by hand since.
    const record: InstallRecord = loaded ? { ...previous[file] } : {};
    if (hadHooks) record.hadHooks = true;
    if (userEvents.length > 0) record.userLists = [...new Set([...(record.userLists ?? []), ...userEvents])];
    if (!loaded) Object.assign(record, { created: true, createdDirs });
    if (addedKeys.length > 0) record.addedKeys = [...new Set([...(record.addedKeys ?? []), ...addedKeys])];
    await updateRecord(file, record);
  }
  return { ...report, changed: true, created: !loaded };
}

/**
 * Removes exactly the entries install adds (recognized by their command), drops lists and objects
 * this leaves empty, and deletes the file (and the directories) install created once nothing is left.
 * `first` runs once the file is known to be changeable, before it changes (files of ours in the
 * directories install created).
 */
export async function uninstall(
  spec: InstallSpec,
  scope: Scope,
  projectDir: string,
  first: () => Promise<void> = async () => {},
): Promise<UninstallReport> {
  const file = target(spec.file(scope, projectDir));
  const report: UninstallReport = {
    agent: spec.agent,
    scope,
    file,
    changed: false,
    deleted: false,
    events: [],
  };
  const loaded = await load(file, byHand(spec));
  if (!loaded) {
    await first();
    return report;
  }
  const settings = loaded.value;
  const hooks = hooksOf(settings, file, spec, false);
  const record = (await readJson<Record<string, InstallRecord>>(recordsFile(), {}))[file];
  if (hooks) {
    // Every list, also an event an older release installed that this one no longer does.
    for (const event of Object.keys(hooks)) {
      const list = hooks[event];
      if (!Array.isArray(list) || removeOurs(list, spec) === 0) continue;
      report.events.push(event);
      if (list.length === 0 && !record?.userLists?.includes(event)) delete hooks[event];
    }
  }
  if (hooks && report.events.length > 0 && Object.keys(hooks).length === 0 && !record?.hadHooks)
    delete settings.hooks;
  const noHooksLeft = !isObject(settings.hooks) || Object.keys(settings.hooks).length === 0;
  let removedKeys = 0;
  if (record?.addedKeys && noHooksLeft) {
    for (const key of record.addedKeys) {
      if (key in settings && JSON.stringify(settings[key]) === JSON.stringify(spec.base[key])) {
        delete settings[key];
        removedKeys++;
      }
    }
  }
  report.changed = report.events.length > 0 || removedKeys > 0;
  const remove = record?.created === true && Object.keys(settings).length === 0;
  if (remove || report.changed) refuseRewrite(file, loaded);
  await first();
  if (remove) {
    await fs.rm(file, { force: true });
    for (const dir of [...(record.createdDirs ?? [])].reverse()) await fs.rmdir(dir).catch(() => {});
    await updateRecord(file, null);
    return { ...report, changed: true, deleted: true };
  }
  if (report.changed) await save(file, loaded);
  // Nothing of this install is left to undo: a later install records afresh.
  if (record) await updateRecord(file, null);
  return report;
}
