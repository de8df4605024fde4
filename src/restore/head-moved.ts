import { GhostcommitError } from "../errors.js";
import { runGit } from "../git/exec.js";
import { humanText } from "../util/format.js";
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

/** How HEAD moved since `atCapture`, read for a refusal made before any capture took HEAD's id. */
export async function headMovedSince(
  location: WorkspaceLocation,
  atCapture: string | null | undefined,
): Promise<HeadMoved | undefined> {
  return headMoved(location, atCapture, await headNow(location));
}

/** HEAD now (null: no commit, or none readable). */
async function headNow(location: WorkspaceLocation): Promise<string | null> {
  if (location.kind !== "git") return null;
  const result = await runGit(["rev-parse", "-q", "--verify", "HEAD^{commit}"], {
    cwd: location.root,
    okCodes: [0, 1, 128],
  }).catch(() => null);
  const id = result?.code === 0 ? result.stdout.toString("utf8").trim() : "";
  return /^[0-9a-f]{40,64}$/.test(id) ? id : null;
}

/** "git's HEAD is main at 1a2b…, not 3c4d… (where other is now) as when those files were captured". */
export function whereHeadIs(head: HeadMoved): string {
  const now =
    head.now === null
      ? `${head.branch ? `${humanText(head.branch)}, ` : ""}no commit`
      : `${head.branch ? `${humanText(head.branch)} at ` : "detached at "}${head.now.slice(0, 12)}`;
  const there = head.branchesThere.map(humanText).join(", ");
  const where = there ? ` (where ${there} ${head.branchesThere.length === 1 ? "is" : "are"} now)` : "";
  return `git's HEAD is ${now}, not ${head.atCapture.slice(0, 12)}${where} as when those files were captured`;
}

/**
 * A refusal (status 3) where git's HEAD moved since the files were captured: a checkout since is
 * likely what changed them, so the refusal says where HEAD is (`head` in its data, as a restore's
 * report has it, and a clause of its message). Other errors, and a HEAD that did not move, pass.
 */
export function withHeadMoved(error: unknown, head: HeadMoved | undefined): unknown {
  if (!head || !GhostcommitError.is(error, "conflict") || error.data.head) return error;
  const clause = `${whereHeadIs(head)}: a checkout since may be what changed them`;
  const message = error.message.replace(/(; nothing was changed|; forced, it would)/, `; ${clause}$1`);
  const marked = new GhostcommitError(
    "conflict",
    message === error.message ? `${message}; ${clause}` : message,
    {
      ...error.data,
      head,
    },
  );
  marked.forceable = error.forceable;
  return marked;
}
