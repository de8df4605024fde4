import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CLI } from "../helpers/repo.js";

/**
 * Reading `strace -f -y` output: which file system calls a command made, in the order they
 * completed, with the paths they touched (absolute: `-y` names each descriptor's file).
 */

const TRACED = "fsync,fdatasync,syncfs,rename,renameat,renameat2,unlink,unlinkat,rmdir,mkdir,mkdirat,openat";

/**
 * Runs `command` under strace, each of its processes killed by the kernel at its n-th `call`
 * (strace counts injections per thread: a process making fewer runs to its end).
 */
export function killedAtCall(
  command: string[],
  call: string,
  n: number,
  options: { cwd?: string; env: NodeJS.ProcessEnv },
) {
  const strace = [
    "-f",
    "-qq",
    "-o",
    "/dev/null",
    "-e",
    `trace=${call}`,
    "-e",
    `inject=${call}:signal=SIGKILL:when=${n}`,
  ];
  return spawnSync("strace", [...strace, ...command], { ...options, encoding: "utf8", timeout: 60_000 });
}

export interface Call {
  pid: number;
  name: string;
  /** Paths named by the call: [from, to] for renames, the synced file for syncs. */
  paths: string[];
  ok: boolean;
  /** Line numbers where the call began and returned (the same for an uninterrupted line). */
  start: number;
  end: number;
}

/** Runs the CLI under strace; returns its exit status and the calls it (and its children) made. */
export function traceCli(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  traceFile: string,
): { status: number | null; stdout: string; stderr: string; calls: Call[] } {
  const result = spawnSync(
    "strace",
    [
      "-f",
      "-y",
      "-qq",
      "-s",
      "4096",
      "-e",
      `trace=${TRACED}`,
      "-o",
      traceFile,
      process.execPath,
      CLI,
      ...args,
    ],
    { cwd, env, encoding: "utf8", timeout: 60_000 },
  );
  if (result.error) throw result.error;
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    calls: parseTrace(readFileSync(traceFile, "utf8")),
  };
}

const QUOTED = /(AT_FDCWD|\d+)?(?:<([^>]*)>)?,? ?"((?:[^"\\]|\\.)*)"/g;

/**
 * A restore writes through directories it holds open, naming `/proc/self/fd/N/name`: `dirs` has
 * the path each such descriptor was opened on (opened with O_DIRECTORY|O_NOFOLLOW, which git's
 * own directory reads do not use).
 */
function pathsOf(name: string, args: string, dirs: Map<string, string>): string[] {
  if (/sync/.test(name)) {
    const fd = /^\d+<([^>]*)>/.exec(args);
    return fd ? [fd[1]] : [];
  }
  const found: string[] = [];
  for (const m of args.matchAll(QUOTED)) {
    const [, , dir, rel] = m;
    const held = /^\/proc\/self\/fd\/(\d+)\/(.*)$/.exec(rel);
    const named = held && dirs.has(held[1]) ? path.join(dirs.get(held[1])!, held[2]) : rel;
    found.push(named.startsWith("/") || !dir ? named : path.join(dir, named));
  }
  return found;
}

export function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const pending = new Map<string, { name: string; args: string; start: number }>();
  const dirs = new Map<string, string>();
  const finish = (pid: number, name: string, args: string, ret: string, start: number, end: number) => {
    const opened = /^(\d+)<([^>]*)>/.exec(ret);
    if (name === "openat" && opened && /O_DIRECTORY/.test(args) && /O_NOFOLLOW/.test(args))
      dirs.set(opened[1], opened[2]);
    if (name !== "openat")
      calls.push({ pid, name, paths: pathsOf(name, args, dirs), ok: /^0\b/.test(ret), start, end });
  };
  text.split("\n").forEach((line, n) => {
    let m = /^(\d+) +(\w+)\((.*)\) += (.*)$/.exec(line);
    if (m) {
      finish(Number(m[1]), m[2], m[3], m[4], n, n);
      return;
    }
    m = /^(\d+) +(\w+)\((.*) <unfinished \.\.\.>$/.exec(line);
    if (m) {
      pending.set(`${m[1]} ${m[2]}`, { name: m[2], args: m[3], start: n });
      return;
    }
    m = /^(\d+) +<\.\.\. (\w+) resumed>(.*)\) += (.*)$/.exec(line);
    if (m) {
      const begun = pending.get(`${m[1]} ${m[2]}`);
      if (!begun) return;
      pending.delete(`${m[1]} ${m[2]}`);
      finish(Number(m[1]), m[2], begun.args + m[3], m[4], begun.start, n);
    }
  });
  return calls.sort((a, b) => a.end - b.end);
}

const isSync = (c: Call) => c.ok && (c.name === "fsync" || c.name === "fdatasync");
const isRename = (c: Call) => c.ok && c.name.startsWith("rename");
const isRemoval = (c: Call) => c.ok && (c.name.startsWith("unlink") || c.name === "rmdir");
const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
/** In the work tree proper: the user's `.git` (the repo store writes there) is not workspace content. */
const inTree = (p: string, root: string) => under(p, root) && !under(p, `${root}/.git`);

export interface Expectations {
  workspace: string;
  /** Objects directory new objects of the safety snapshot go to. */
  objectsDir: string;
  /** The safety snapshot's ref file. */
  refFile: string;
  /** Directory of the restore journal. */
  journalDir: string;
}

/**
 * Checks the order the contract asks for; returns each violation in words. Before the first
 * rename or deletion in the workspace: every object renamed into the store is flushed (by a
 * `syncfs` or its own fsync) before the safety ref is renamed into place; the ref's lock file is
 * fsynced before that rename and its directory after; the journal's directory is fsynced. In
 * the workspace: each file is renamed from a temp file fsynced before, and every directory whose
 * entries changed is fsynced after its last change.
 */
export function orderProblems(
  calls: Call[],
  x: Expectations,
): { problems: string[]; counts: Record<string, number> } {
  const problems: string[] = [];
  const inWorkspace = (c: Call) =>
    (isRename(c) && inTree(c.paths[1] ?? "", x.workspace)) ||
    (isRemoval(c) && inTree(c.paths[0] ?? "", x.workspace));
  const first = calls.find(inWorkspace);
  const firstStart = first ? first.start : Number.POSITIVE_INFINITY;
  const refRename = calls.find((c) => isRename(c) && c.paths[1] === x.refFile);
  if (!refRename) problems.push(`no rename of the safety ref ${x.refFile}`);
  else {
    if (refRename.end > firstStart) problems.push("the safety ref was renamed after the workspace changed");
    const objects = calls.filter(
      (c) =>
        isRename(c) &&
        c.end < refRename.start &&
        /\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(c.paths[1] ?? "") &&
        under(c.paths[1], x.objectsDir),
    );
    for (const o of objects) {
      const flushed = calls.some(
        (s) =>
          s.end > o.end &&
          s.end < refRename.start &&
          ((s.ok && s.name === "syncfs") || (isSync(s) && s.paths[0] === o.paths[1])),
      );
      if (!flushed) problems.push(`object ${o.paths[1]} not flushed before the ref`);
    }
    if (!calls.some((s) => isSync(s) && s.paths[0] === `${x.refFile}.lock` && s.end < refRename.start))
      problems.push("the ref's lock file was not fsynced before its rename");
    if (
      !calls.some(
        (s) =>
          isSync(s) && s.paths[0] === path.dirname(x.refFile) && s.end > refRename.end && s.end < firstStart,
      )
    )
      problems.push("the ref's directory was not fsynced before the workspace changed");
  }
  if (!calls.some((s) => isSync(s) && s.paths[0] === x.journalDir && s.end < firstStart))
    problems.push("the journal's directory was not fsynced before the workspace changed");
  const changes = calls.filter(inWorkspace);
  const lastChangeIn = new Map<string, number>();
  for (const c of changes) {
    const target = isRename(c) ? c.paths[1] : c.paths[0];
    lastChangeIn.set(path.dirname(target), c.end);
    if (!isRename(c)) continue;
    const [from, to] = c.paths;
    if (!/\.gc-[0-9a-f]+-\d+~$/.test(from)) problems.push(`${to} was not written through a temp file`);
    else if (!calls.some((s) => isSync(s) && s.paths[0] === from && s.end < c.start))
      problems.push(`temp file ${from} was not fsynced before its rename to ${to}`);
  }
  for (const c of calls.filter(
    (c) => c.ok && c.name.startsWith("mkdir") && inTree(c.paths[0] ?? "", x.workspace),
  ))
    lastChangeIn.set(
      path.dirname(c.paths[0]),
      Math.max(lastChangeIn.get(path.dirname(c.paths[0])) ?? 0, c.end),
    );
  const removedDirs = new Set(changes.filter((c) => c.ok && c.name === "rmdir").map((c) => c.paths[0]));
  for (const [dir, last] of lastChangeIn) {
    if (removedDirs.has(dir)) continue; // gone: its parent's entry changed instead
    if (!calls.some((s) => isSync(s) && s.paths[0] === dir && s.end > last))
      problems.push(`directory ${dir} was not fsynced after its entries changed`);
  }
  return {
    problems,
    counts: {
      workspaceRenames: changes.filter(isRename).length,
      workspaceRemovals: changes.filter(isRemoval).length,
      syncfs: calls.filter((c) => c.ok && c.name === "syncfs").length,
    },
  };
}
