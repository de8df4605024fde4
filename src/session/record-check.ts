import { isCleanRel } from "../paths.js";
import { isPlainObject } from "../util/state-files.js";

/**
 * The path lists of each journal record: required ones, and optional ones (`?`). A touch's
 * `paths` may name the workspace root itself ("").
 */
const PATH_LISTS: Record<string, string[]> = {
  touch: ["paths", "files", "absent?", "unknown?"],
  mark: ["paths?"],
  end: ["changed", "uncertain?", "afterLastTool?"],
  rewind: ["deleted", "paths?"],
  redo: ["deleted?"],
};

/**
 * Whether a journal record's paths are all inside the workspace, in lists where lists belong.
 * This machine's hooks and commands write only such records; a journal fetched from a remote
 * (forged, or damaged) may hold `../x` or `/etc/x`, which a rewind would write or delete, and a
 * snapshot of the session would read. Such a record is not trusted: the fold never sees it.
 */
export function trustedRecord(record: Record<string, unknown>): boolean {
  for (const spec of PATH_LISTS[String(record.e)] ?? []) {
    const optional = spec.endsWith("?");
    const key = optional ? spec.slice(0, -1) : spec;
    const rootAllowed = record.e === "touch" && key === "paths";
    if (record[key] === undefined && optional) continue;
    if (!isPathList(record[key], rootAllowed)) return false;
  }
  if (record.e === "end" && isPlainObject(record.folds) && record.folds.unknown !== undefined)
    return isPathList(record.folds.unknown);
  if (record.e === "rewind") {
    const written = record.written;
    if (!Array.isArray(written) || !written.every((w) => Array.isArray(w) && isCleanRel(w[0]))) return false;
    const closed = record.closed;
    if (closed !== undefined) {
      if (!isPlainObject(closed) || !isPathList(closed.changed)) return false;
      if (closed.uncertain !== undefined && !isPathList(closed.uncertain)) return false;
    }
  }
  return true;
}

function isPathList(value: unknown, rootAllowed = false): boolean {
  return Array.isArray(value) && value.every((p) => isCleanRel(p) || (rootAllowed && p === ""));
}
