import { runGit } from "../git/exec.js";

/** No hook, reflog or user config of the user's repository runs when we write a ref there. */
export const QUIET_REF_CONFIG = [
  "-c",
  "core.hooksPath=/nonexistent/ghostcommit-no-hooks",
  "-c",
  "core.logAllRefUpdates=false",
];

/** `update-ref --stdin -z` on the refs of `refsGitDir`, quietly (see QUIET_REF_CONFIG). */
export async function updateRefsQuietly(cwd: string, refsGitDir: string, input: string): Promise<void> {
  await runGit([...QUIET_REF_CONFIG, "update-ref", "--stdin", "-z"], {
    cwd,
    env: { GIT_DIR: refsGitDir },
    input,
  });
}
