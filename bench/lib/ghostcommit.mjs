// Invokes the built ghostcommit CLI as a user would, one process per command.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "./env.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const BUILT = path.resolve(here, "../../dist");
const WRAPPER = path.join(here, "cli-wrapper.cjs");
export let MAIN = path.join(BUILT, "ghostcommit.cjs");

/**
 * Runs the bench against a private copy of dist/ (inside bench/.trees, so node_modules still
 * resolves): a rebuild by someone else mid-run cannot change or break what is measured.
 * Returns the copy's directory, for removal.
 */
export function pinBuild() {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const dir = path.resolve(here, `../.trees/build-${process.pid}`);
  cpSync(BUILT, path.join(dir, "dist"), { recursive: true });
  cpSync(path.resolve(here, "../../package.json"), path.join(dir, "package.json"));
  MAIN = path.join(dir, "dist/ghostcommit.cjs");
  return dir;
}

/**
 * Runs `ghostcommit -C root <args> --json` with its data dir at `home`. Returns wall time, the
 * parsed JSON and the node process's peak RSS in KiB (via the in-process wrapper).
 */
export function ghostcommit(root, home, args, { env, scratch, extra = {}, ok = [0] }) {
  const rssFile = path.join(scratch, `rss-${process.pid}`);
  rmSync(rssFile, { force: true });
  const result = run(process.execPath, [WRAPPER, MAIN, "-C", root, ...args, "--json"], {
    env: { ...env, ...extra, GHOSTCOMMIT_HOME: home, BENCH_RSS_FILE: rssFile },
    ok,
  });
  let json = null;
  try {
    json = JSON.parse(result.stdout.toString());
  } catch {
    // not every command prints JSON on failure
  }
  let rssKiB = null;
  try {
    rssKiB = Number(readFileSync(rssFile, "utf8"));
  } catch {
    // the process died before its exit hook
  }
  return { ms: result.ms, json, rssKiB, status: result.status, backgroundMs: backgroundBuildMs(home) };
}

/**
 * Waits (untimed) for a detached build of the private index copy that the command started, as an
 * agent's own work between two snapshots would, so it never runs under the next measurement.
 * Returns how long it still ran after the command exited (0 when there was none).
 */
export function backgroundBuildMs(home) {
  const start = performance.now();
  const deadline = start + 120_000;
  const building = () => {
    const workspaces = storeDirOf(home);
    if (!existsSync(workspaces)) return false;
    return readdirSync(workspaces).some((key) =>
      existsSync(path.join(workspaces, key, "status-index.building")),
    );
  };
  let waited = false;
  while (building()) {
    if (performance.now() > deadline) throw new Error(`a background build in ${home} did not finish`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    waited = true;
  }
  return waited ? Math.round(performance.now() - start) : 0;
}

/** The store directory of the single workspace under a data dir. */
export function storeDirOf(home) {
  return path.join(home, "workspaces");
}

/**
 * Runs one library call in a fresh process and returns the call's own time (see in-process.mjs).
 * `editsFile`: the process runs the call once first, then edits those files and times the next.
 */
export function ghostcommitInProcess(root, home, op, { env, editsFile }) {
  const script = path.join(here, "in-process.mjs");
  const index = path.join(path.dirname(MAIN), "index.js");
  const result = run(process.execPath, [script, index, root, op, ...(editsFile ? [editsFile] : [])], {
    env: { ...env, GHOSTCOMMIT_HOME: home },
  });
  return JSON.parse(result.stdout.toString()).ms;
}
