import { promises as fs } from "node:fs";
import path from "node:path";
import { dataHome } from "../util/data-dirs.js";
import { climbsOut } from "../paths.js";
import type { StoreContext } from "../store/context.js";
import type { DoctorProblem } from "../types.js";
import type { DoctorCheck } from "./doctor.js";
import { isoFromMillis } from "../util/format.js";
import { makeDirsAsync } from "../util/make-dirs.js";

/** One line of the hook log (JSON Lines). */
export interface HookLogEntry {
  t: string;
  level: "error" | "warn";
  agent: string;
  event?: string;
  session?: string;
  /** The directory the event was for (global log: which workspace it concerns). */
  dir?: string;
  /** Global log: the workspace whose own log has this entry too (its doctor reports it from there). */
  loggedIn?: string;
  message: string;
}

/** Past this size the log keeps only its newest part. */
const MAX_LOG_BYTES = 512 * 1024;
/** Doctor reports failures this recent. */
const RECENT_MS = 7 * 24 * 3600 * 1000;
/** A global failure that names no workspace of this doctor's is reported only this soon after. */
const GLOBAL_RECENT_MS = 3600 * 1000;

/** Hook failures that belong to no workspace (the event named none that could be opened). */
export function globalHookLog(): string {
  return path.join(dataHome(), "hooks.log");
}

/**
 * Appends an entry to a hook log (`to`: its file, or what names it). Never throws: a hook that cannot log must still exit 0.
 * Concurrent hooks append whole lines (O_APPEND), so lines never interleave.
 */
export async function appendHookLog(
  to: string | (() => string),
  entry: Omit<HookLogEntry, "t">,
): Promise<void> {
  try {
    // Inside the try: naming the global log throws when GHOSTCOMMIT_HOME is set wrong.
    const file = typeof to === "string" ? to : to();
    await makeDirsAsync(path.dirname(file));
    const size = await fs.stat(file).then(
      (s) => s.size,
      () => 0,
    );
    if (size > MAX_LOG_BYTES) {
      const text = await fs.readFile(file, "utf8");
      const tail = text.slice(-MAX_LOG_BYTES / 2);
      await fs.writeFile(file, tail.slice(tail.indexOf("\n") + 1), { mode: 0o600 });
    }
    await fs.appendFile(file, `${JSON.stringify({ t: isoFromMillis(Date.now()), ...entry })}\n`, {
      mode: 0o600,
    });
  } catch {
    // nowhere left to report to
  }
}

/** Reads a hook log; damaged lines are skipped. */
export async function readHookLog(file: string): Promise<HookLogEntry[]> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  const entries: HookLogEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const entry = JSON.parse(line) as HookLogEntry;
      if (typeof entry.t === "string" && typeof entry.message === "string") entries.push(entry);
    } catch {
      // a torn or foreign line
    }
  }
  return entries;
}

async function recentErrors(file: string, now: number): Promise<HookLogEntry[]> {
  return (await readHookLog(file)).filter((e) => e.level === "error" && now - Date.parse(e.t) <= RECENT_MS);
}

/** True when a global log entry concerns the workspace at `root`: its directory is in it. */
function concerns(entry: HookLogEntry, root: string): boolean {
  if (!entry.dir) return false;
  const rel = path.relative(root, path.resolve(entry.dir));
  return rel === "" || !climbsOut(rel);
}

/**
 * Doctor check: hook failures of the last 7 days in this workspace's log; of the global log, only
 * those that concern this workspace or are from the last hour, so one bad event elsewhere does not
 * fail every workspace's doctor for a week.
 */
export const checkHookLog: DoctorCheck = async (engine: StoreContext) => {
  const problems: DoctorProblem[] = [];
  const now = Date.now();
  for (const file of [engine.paths.logFile, globalHookLog()]) {
    let errors = await recentErrors(file, now);
    if (file !== engine.paths.logFile) {
      errors = errors.filter(
        (e) =>
          (concerns(e, engine.root) || now - Date.parse(e.t) <= GLOBAL_RECENT_MS) &&
          !(typeof e.loggedIn === "string" && path.resolve(e.loggedIn) === engine.root),
      );
    }
    if (errors.length === 0) continue;
    const last = errors[errors.length - 1];
    const when =
      file === engine.paths.logFile
        ? "in the last 7 days"
        : "logged outside any workspace (this workspace's of the last 7 days, others' of the last hour)";
    problems.push({
      code: "hook-errors",
      message: `${errors.length} hook failure${errors.length === 1 ? "" : "s"} ${when}; latest (${[last.t, [last.agent, last.event].filter(Boolean).join(" ")].filter(Boolean).join(", ")}): ${last.message}. Details in ${file}; delete it to clear this.`,
      path: file,
    });
  }
  return problems;
};
