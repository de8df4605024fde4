import { checkArgument, checkedOptions } from "../errors.js";
import { forgetLastSafety } from "../store/last-safety.js";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { runGit } from "../git/exec.js";
import { watchmanUse } from "../capture/fsmonitor.js";
import type { DoctorRepair, DoctorReport } from "../types.js";
import { cleanLeftovers, deadRestoreJournals, interruptedRestores } from "../store/restore-journal.js";
import { alive } from "../util/process.js";
import {
  deadLocks,
  leftoverPackTemps,
  orphanedPackFiles,
  type Problem,
  plainIndexProblem,
  snapshotsMissingObjects,
  staleGitLocks,
  staleGitTempFiles,
  unwritableStoreDir,
  namedIn,
  interruptedProblem,
  lostLastSafety,
} from "./store-check.js";
import { checkBorrowing } from "./borrow-check.js";
import { damagedStateFiles } from "./state-files.js";
import { STORE_FILES, storeCannotBeMade } from "../store/layout.js";
import { fetchedLinkRefs, removeFetchedLinks } from "../store/fetched-links.js";
import { deadPackTemps, removePackTemps } from "../store/pack-temps.js";
import { withSyncLock } from "../session/remote-sessions.js";
import { damagedFrame, repairFrame } from "./store-frame.js";
import {
  damagedRefProblems,
  danglingSessionRefProblems,
  repairDamagedRefs,
  repairDanglingSessionRefs,
} from "./damaged-refs.js";
import { objectDamageProblems, repairObjectDamage } from "./damaged-objects.js";
import { checkSnapshots } from "./snapshot-check.js";
import { cannotMakeDirectoryIn } from "./data-dir-probe.js";
import { unreadableUserConfig } from "./user-config.js";

/** Extra checks contributed by other layers (session journals, hook logs). */
export type DoctorCheck = (engine: StoreContext) => Promise<Problem[]>;

export const MIN_GIT = [2, 25] as const;

export interface DoctorOptions {
  /** Fix what can be fixed (see `repairStore`) and report what was done. */
  repair?: boolean;
}

/** Parses "git version 2.39.5" (or a vendor suffix) into numbers. */
export function parseGitVersion(text: string): number[] | null {
  const match = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : null;
}

/**
 * Checks git, the store's objects and refs, its state files, and leftovers of interrupted runs.
 * With `repair`, first fixes what can be fixed, then checks again: `problems` is what is left,
 * `repaired` what was done.
 */
export async function runDoctor(
  engine: StoreContext,
  layerChecks: DoctorCheck[] = [],
  given?: DoctorOptions & { checks?: DoctorCheck[] },
): Promise<DoctorReport> {
  // As the command line checks its flags: `repair: "no"` must not repair.
  const options = checkedOptions(given, "doctor", { booleans: ["repair"], others: ["checks"] });
  const { checks = [] } = options;
  const functions = Array.isArray(checks) && checks.every((check) => typeof check === "function");
  checkArgument(functions, "doctor: checks must be a list of functions");
  const extraChecks = [...layerChecks, ...checks];
  const versionText =
    (await runGit(["--version"], { cwd: engine.root }).catch(() => null))?.stdout.toString() ?? "";
  const version = parseGitVersion(versionText);
  const badConfig = await unreadableUserConfig(engine.root);
  if (badConfig)
    return { ok: false, problems: [badConfig], gitVersion: version?.join("."), store: engine.paths.dir };
  const repaired = options.repair ? await repairStore(engine) : undefined;
  const problems: Problem[] = [];
  if (!version || version[0] < MIN_GIT[0] || (version[0] === MIN_GIT[0] && version[1] < MIN_GIT[1])) {
    problems.push({
      code: "git-too-old",
      message: `git ${MIN_GIT.join(".")} or newer is needed (found: ${versionText.trim() || "none"})`,
    });
  }
  const frame = await damagedFrame(engine);
  const storeExists = await fs.access(path.join(engine.paths.gitDir, "HEAD")).then(
    () => true,
    () => false,
  );
  if (frame.length > 0) {
    problems.push({
      code: "damaged-store",
      message: `the store's git directory is damaged (${frame.join(", ")} missing or unreadable): every command fails until doctor --repair writes them again; the snapshots' refs and objects are kept`,
      path: engine.paths.gitDir,
    });
  } else if (storeExists) {
    // No store yet is not a problem: nothing has been snapshotted (or the workspace is disabled).
    const unwritable = unwritableStoreDir(engine);
    if (unwritable) {
      problems.push({
        code: "store-not-writable",
        message: `${unwritable.dir} cannot be written to (${unwritable.errno}): every snapshot, restore and drop fails until this user may write there`,
        path: unwritable.dir,
      });
    }
    const objects = await objectDamageProblems(engine);
    const unindexed = objects.some((p) => p.code === "unindexed-pack" || p.code === "damaged-pack");
    problems.push(
      ...(await damagedRefProblems(engine)),
      ...objects,
      ...(await danglingSessionRefProblems(engine)),
      ...(await checkSnapshots(engine, unindexed)),
    );
    const leftLinks = await fetchedLinkRefs(engine);
    if (leftLinks.length > 0) {
      problems.push({
        code: "leftover-fetch-refs",
        message: `${leftLinks.length} temporary ref(s) of a fetch that was cut off keep snapshots from being freed; doctor --repair, gc or the next fetch removes them`,
      });
    }
    problems.push(...(await checkBorrowing(engine)));
    problems.push(...(await checkFiles(engine)));
  } else {
    const unusable = storeCannotBeMade(engine.paths.dir) ?? (await cannotMakeDirectoryIn(engine.paths.dir));
    if (unusable) problems.push({ code: "data-dir-unusable", message: unusable });
  }
  for (const check of extraChecks) problems.push(...(await check(engine)));
  const report: DoctorReport = {
    ok: problems.length === 0,
    problems,
    gitVersion: version?.join("."),
    store: engine.paths.dir,
    watchman: await watchmanUse(
      engine.paths,
      engine.settings,
      engine.location.worktreeRoot ?? null,
      engine.location.gitDir ? path.join(engine.location.gitDir, "index") : null,
    ),
  };
  if (repaired) report.repaired = repaired;
  return report;
}

async function checkFiles(engine: StoreContext): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const name of await damagedStateFiles(engine)) {
    problems.push({
      code: "damaged-state-file",
      message: `${name} is damaged (ignored; \`doctor --repair\` resets it)`,
      path: path.join(engine.paths.dir, name),
    });
  }
  const indexProblem = await plainIndexProblem(engine);
  if (indexProblem) {
    problems.push({
      code: "damaged-plain-index",
      message: `the store's index of this directory is unusable: ${indexProblem} (\`doctor --repair\` rebuilds it)`,
      path: path.join(engine.paths.dir, STORE_FILES.plainIndex),
    });
  }
  for (const file of await deadRestoreJournals(engine.paths)) {
    problems.push(interruptedProblem(await namedIn(file), file));
  }
  for (const record of await interruptedRestores(engine.paths)) {
    problems.push(interruptedProblem(record, record.file, record.startedAt));
  }
  problems.push(...(await leftoverPackTemps(engine)));
  for (const file of [...(await deadLocks(engine, alive)), ...(await staleGitLocks(engine))]) {
    problems.push({
      code: "stale-lock",
      message: `${path.relative(engine.paths.dir, file)} was left by a process that died; \`doctor --repair\` removes it`,
      path: file,
    });
  }
  return problems;
}

/**
 * Fixes what can be fixed, each step reported: drops refs of snapshots that cannot be restored
 * (commit or objects gone), resets damaged state files and an unusable plain-directory index,
 * removes leftovers of dead processes (temp files, temp git dirs, stale locks) and acknowledges
 * interrupted restores (their safety snapshots stay listed).
 */
export async function repairStore(engine: StoreContext): Promise<DoctorRepair[]> {
  const done: DoctorRepair[] = [];
  const frame = await damagedFrame(engine);
  if (frame.length > 0) {
    repairFrame(engine, frame);
    done.push({
      code: "rewrote-store-frame",
      message: `wrote the store's ${frame.join(", ")} again`,
      path: engine.paths.gitDir,
    });
  }
  const storeExists = await fs.access(path.join(engine.paths.gitDir, "HEAD")).then(
    () => true,
    () => false,
  );
  if (!storeExists) return done;
  done.push(...(await repairObjectDamage(engine))); // first: what it brings back keeps snapshots
  const leftovers = await cleanLeftovers(engine.paths, engine.root, engine.refs.objectsDir);
  for (const file of [...(await staleGitTempFiles(engine)), ...(await orphanedPackFiles(engine))]) {
    await fs.rm(file, { force: true });
    leftovers.removed.push(file);
  }
  // Under the sync lock: no fetch starts writing one meanwhile.
  const temps = await withSyncLock(engine, async () =>
    removePackTemps(await deadPackTemps(engine, { sync: true })),
  );
  leftovers.removed.push(...temps.map((temp) => temp.file));
  for (const file of leftovers.removed) {
    done.push({ code: "removed-leftover", message: `removed ${file}`, path: file });
  }
  for (const file of [...(await deadLocks(engine, alive)), ...(await staleGitLocks(engine))]) {
    await fs.rm(file, { force: true });
    done.push({ code: "removed-stale-lock", message: `removed ${file}`, path: file });
  }
  // Under the sync lock: a fetch running now still needs its own.
  const removedLinks = await withSyncLock(engine, () => removeFetchedLinks(engine));
  if (removedLinks > 0) {
    done.push({
      code: "removed-fetch-refs",
      message: `removed ${removedLinks} temporary ref(s) of a fetch that was cut off`,
    });
  }
  for (const record of await interruptedRestores(engine.paths)) {
    await fs.rm(record.file, { force: true });
    done.push({
      code: "acknowledged-interrupted-restore",
      message: `noted an interrupted restore${record.startedAt ? ` (${record.startedAt})` : ""}; its safety snapshot ${record.safety ?? "?"} stays listed`,
      path: record.file,
    });
  }
  done.push(...(await repairDamagedRefs(engine))); // before the snapshots' check: they are listed again
  done.push(...(await repairDanglingSessionRefs(engine)));
  const ids = await engine.refs.refIds();
  const { snapshots, unreadable } = await engine.refs.readCommits(ids);
  const missing = await snapshotsMissingObjects(
    engine,
    snapshots.map((s) => s.id),
  );
  const drop = [...unreadable, ...missing.keys()];
  if (drop.length > 0) {
    await engine.refs.remove(drop);
    for (const id of drop) {
      done.push({
        code: "dropped-damaged-snapshot",
        message: `dropped snapshot ${id}: ${unreadable.includes(id) ? "its commit cannot be read" : "objects it needs are missing"}`,
      });
    }
  }
  const lost = await lostLastSafety(
    engine,
    ids.filter((id) => !drop.includes(id)),
  );
  if (lost) {
    await forgetLastSafety(engine);
    done.push({ code: "reset-state-file", message: `forgot the lost safety snapshot ${lost}` });
  }
  for (const name of await damagedStateFiles(engine)) {
    await fs.rm(path.join(engine.paths.dir, name), { force: true });
    done.push({
      code: "reset-state-file",
      message: `reset ${name}`,
      path: path.join(engine.paths.dir, name),
    });
  }
  if (await plainIndexProblem(engine)) {
    await fs.rm(path.join(engine.paths.dir, STORE_FILES.plainIndex), { force: true });
    await fs.rm(path.join(engine.paths.dir, STORE_FILES.plainState), { force: true });
    done.push({
      code: "reset-plain-index",
      message: "reset the store's index of this directory (the next snapshot reads every file again)",
    });
  }
  if (drop.length > 0 || done.length > 0) {
    // Cached blob ids may name objects that are gone: never trust them after a repair.
    await fs.rm(path.join(engine.paths.dir, STORE_FILES.hashCache), { force: true });
  }
  return done;
}
