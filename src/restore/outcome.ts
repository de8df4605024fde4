import { displayPath } from "../paths.js";
import type { RestoreReport } from "../types.js";
import type { RestoreResult } from "./restore.js";

/** The paths that could not be written (SPEC §4: the only skips that make the status 1). */
export function failedSkips(report: { skipped: RestoreReport["skipped"] }): RestoreReport["skipped"] {
  return report.skipped.filter((s) => s.reason === "permission" || s.reason === "io");
}

export function hardSkips(report: { skipped: RestoreReport["skipped"] }): boolean {
  return failedSkips(report).length > 0;
}

/**
 * A path the file system failed to write (a full disk, an I/O error): worth trying again, unlike
 * one the user's permissions protect. A rewind with such a skip is left to finish (see rewindSession).
 */
export function ioSkips(report: { skipped: RestoreReport["skipped"] }): boolean {
  return report.skipped.some((s) => s.reason === "io");
}

/** A restore's outcome as people and JSON see it: display paths instead of raw bytes. */
export function displayOutcome(result: RestoreResult): RestoreReport {
  return {
    written: result.written.map(displayPath),
    deleted: result.deleted.map(displayPath),
    skipped: result.skipped.map((s) => ({ ...s, path: displayPath(s.path) })),
    safety: result.safety,
    ...(result.head ? { head: result.head } : {}),
  };
}
