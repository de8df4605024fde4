import { readFileSync } from "node:fs";

/**
 * Whether a process with this pid runs on this machine (EPERM: it runs, as another user). A
 * zombie, killed but not yet reaped by its parent, still answers signal 0 but runs no code and
 * holds nothing: it counts as dead, or a lock it held would wait until its parent reaps it.
 */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/** Linux's /proc: the state after the command name, which may itself hold ") ". Elsewhere false. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.charAt(stat.lastIndexOf(")") + 2) === "Z";
  } catch {
    return false;
  }
}
