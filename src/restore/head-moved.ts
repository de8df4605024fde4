import { runGit } from "../git/exec.js";
import type { WorkspaceLocation } from "../git/repository.js";
import type { HeadMoved } from "../types.js";

/**
 * How git's HEAD moved since `atCapture` (the HEAD a snapshot recorded), or undefined where it did not
 * (or there is none to compare: a plain directory, a snapshot taken before the first commit).
 * The names cost two git processes, run only when it moved.
 */
export async function headMoved(
  location: WorkspaceLocation,
  atCapture: string | null | undefined,
  now: string | null,
): Promise<HeadMoved | undefined> {
  if (location.kind !== "git" || !atCapture || atCapture === now) return undefined;
  const git = (args: string[]) =>
    runGit(args, { cwd: location.root, okCodes: [0, 1, 128] }).then(
      (r) => (r.code === 0 ? r.stdout.toString("utf8").split("\n").filter(Boolean) : []),
      () => [],
    );
  const [branch, branchesThere] = await Promise.all([
    git(["symbolic-ref", "-q", "--short", "HEAD"]),
    // A commit git no longer has (pruned) names no branch: then [] as for none.
    git(["for-each-ref", "--points-at", atCapture, "--format=%(refname:short)", "refs/heads/"]),
  ]);
  return { atCapture, now, branch: branch[0] ?? null, branchesThere };
}
