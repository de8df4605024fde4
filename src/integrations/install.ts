import { isPlainObject } from "../util/state-files.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { readJson, writeFileAtomic } from "../store/layout.js";
import { makeDirsAsync } from "../util/make-dirs.js";
import {
  addEntries,
  addKeysFirst,
  checkHooksShape,
  oursIn,
  removeEntries,
  removeKeys,
} from "./hook-entries.js";
import { layoutOf } from "./json-edit.js";
import { parseJsoncTree } from "./jsonc.js";
import { type Json, load, refuseRewrite, save, target } from "./settings-file.js";
import type { InstallSpec, Scope } from "./specs.js";

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
  /** The file held only these blanks (or nothing) before install: uninstall gives them back. */
  blankText?: string;
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
  const loaded = await load(file, spec.comments);
  const settings: Json = loaded?.value ?? {};
  checkHooksShape(settings, file, spec);
  // The user's own `hooks` object and lists, even empty ones, stay after uninstall; one holding
  // entries of ours is a former install's.
  const lists = isPlainObject(settings.hooks) ? Object.entries(settings.hooks) : [];
  const withOurs = new Set(lists.filter(([, list]) => oursIn(list, spec) > 0).map(([event]) => event));
  const hadHooks = isPlainObject(settings.hooks) && withOurs.size === 0;
  const userEvents = lists
    .filter(([event, list]) => Array.isArray(list) && !withOurs.has(event))
    .map(([event]) => event);
  // A blank file is filled as a new one would be; uninstall gives its blanks back.
  const before = loaded && !loaded.blank ? loaded.text : "{}\n";
  const layout = layoutOf(before, loaded && !loaded.blank ? loaded.tree : parseJsoncTree(before));
  const added = addEntries(before, spec, command, layout);
  const events = added.events;
  const report: InstallReport = { agent: spec.agent, scope, file, changed: false, created: false, events };
  if (loaded && events.length === 0) return report;
  if (loaded) refuseRewrite(file, loaded);
  const addedKeys = Object.keys(spec.base).filter((key) => !(key in settings));
  const text = addKeysFirst(
    added.text,
    addedKeys.map((key) => [key, spec.base[key]]),
    layout,
  );
  const createdDirs = await missingDirs(path.dirname(file));
  await fs.mkdir(path.dirname(file), { recursive: true });
  await save(file, text, loaded?.stat);
  if (!loaded || loaded.blank || addedKeys.length > 0 || hadHooks || userEvents.length > 0) {
    const previous = await readJson<Record<string, InstallRecord>>(recordsFile(), {});
    // A file made now owes nothing to a record of one that was removed by hand since.
    const record: InstallRecord = loaded ? { ...previous[file] } : {};
    if (hadHooks) record.hadHooks = true;
    if (userEvents.length > 0) record.userLists = [...new Set([...(record.userLists ?? []), ...userEvents])];
    if (!loaded) Object.assign(record, { created: true, createdDirs });
    if (loaded?.blank) record.blankText = loaded.text;
    if (addedKeys.length > 0) record.addedKeys = [...new Set([...(record.addedKeys ?? []), ...addedKeys])];
    await updateRecord(file, record);
  }
  return { ...report, changed: true, created: !loaded };
}

/**
 * Removes exactly the entries install adds, drops lists and objects this leaves empty, and deletes
 * the file (and the directories) install created once nothing is left; a file that was blank is
 * given its blanks back. `first` runs once the file is known to be changeable, before it changes
 * (files of ours in the directories install created).
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
  const loaded = await load(file, spec.comments);
  if (!loaded) {
    await first();
    return report;
  }
  const settings = loaded.value;
  checkHooksShape(settings, file, spec);
  const record = (await readJson<Record<string, InstallRecord>>(recordsFile(), {}))[file];
  const start = loaded.blank ? "{}" : loaded.text;
  const removal = removeEntries(start, spec, record);
  let text = removal.text;
  report.events = removal.events;
  let removedKeys = 0;
  const hooksLeft = (parseJsoncTree(text).value as Json).hooks;
  // Keys install added go when what is left is what was there before it (the user's own lists):
  // hooks added since may need them (Cursor reads its file by `version`).
  const before = new Set(record?.userLists ?? []);
  const onlyTheirs = !isPlainObject(hooksLeft) || Object.keys(hooksLeft).every((event) => before.has(event));
  if (record?.addedKeys && onlyTheirs) {
    const keys = removeKeys(text, spec.base, record.addedKeys);
    text = keys.text;
    removedKeys = keys.removed;
  }
  report.changed = report.events.length > 0 || removedKeys > 0;
  const empty = Object.keys(parseJsoncTree(text).value as Json).length === 0;
  const remove = record?.created === true && empty;
  if (empty && record?.blankText !== undefined) text = record.blankText;
  if (remove || report.changed) refuseRewrite(file, loaded);
  await first();
  if (remove) {
    await fs.rm(file, { force: true });
    for (const dir of [...(record.createdDirs ?? [])].reverse()) await fs.rmdir(dir).catch(() => {});
    await updateRecord(file, null);
    return { ...report, changed: true, deleted: true };
  }
  if (report.changed && text !== loaded.text) await save(file, text, loaded.stat);
  // Nothing of this install is left to undo: a later install records afresh.
  if (record) await updateRecord(file, null);
  return report;
}
