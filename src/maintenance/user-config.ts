import { runGit } from "../git/exec.js";
import { badGitConfig, gitConfigProblem } from "../git/failure.js";
import type { Problem } from "./store-check.js";

/**
 * A configuration of the user's that git cannot read (a bad line or value in their global, system
 * or repository config): every git command fails there, `git status` too, so doctor says that
 * alone and repairs nothing. A store checked then would look damaged, and snapshots whose objects
 * git could not read would look lost. Null when git reads it (or fails for another reason).
 */
export async function unreadableUserConfig(root: string): Promise<Problem | null> {
  // rev-parse reads every config file git would, core.* values included, and needs no repository.
  const probe = await runGit(["rev-parse", "--git-common-dir"], { cwd: root, okCodes: [0, 128] }).catch(
    () => null,
  );
  const config = probe && probe.code !== 0 ? gitConfigProblem(probe.stderr, root) : null;
  if (!config) return null;
  return {
    code: "bad-git-config",
    message: badGitConfig(config).message,
    ...(config.file ? { path: config.file } : {}),
  };
}
