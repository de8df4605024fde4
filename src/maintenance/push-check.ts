import path from "node:path";
import { WORKSPACE_CONFIG, workspaceSetsPush } from "../config.js";
import { userConfigPath } from "../util/data-dirs.js";
import type { StoreContext } from "../store/context.js";
import { backgroundPushLog, backgroundPushStatus } from "../session/auto-push.js";
import type { DoctorCheck } from "./doctor.js";
import type { Problem } from "./store-check.js";

/**
 * Doctor check: the latest background push (after a turn) failed. The next success clears it, and
 * so does switching the background push off.
 */
export const checkBackgroundPush: DoctorCheck = async (engine: StoreContext) => {
  const setsPush = [engine.root, engine.location.worktreeRoot ?? engine.root].find(workspaceSetsPush);
  if (setsPush) return [ignoredPushSetting(setsPush)];
  if (engine.settings.push?.after !== "turn") return [];
  const status = await backgroundPushStatus(engine);
  if (status?.ok && status.refsLeft) return [refsLeft(status.remote, status.t, status.refsLeft)];
  if (!status || status.ok) return [];
  const retry = status.ignored
    ? // Retrying as is fails again: the session's later snapshots keep those files.
      `Each later background push is refused too while new snapshots hold them: \`ghostcommit push ${status.remote} --include-ignored\` sends what is there now, \`"includeIgnored": true\` in the config's \`push\` setting sends them after every turn`
    : status.leftOut
      ? // Retrying cannot help either: the remote's history under those ids stays.
        `Each later background push leaves ${status.leftOut.length === 1 ? "it" : "them"} out too: continue under a new session id, or send ${status.leftOut.length === 1 ? "it" : "them"} to another remote (\`ghostcommit push URL --session S\`)`
      : `\`ghostcommit push ${status.remote}\` sends them now (this stays reported until a background push after a turn succeeds)`;
  return [
    {
      code: "push-failed",
      message: `the background push to ${status.remote} after a turn failed (${status.t}): ${status.message ?? "unknown error"}. ${retry}; details in the log`,
      path: backgroundPushLog(engine),
    },
  ];
};

/** The latest background push went through, but the remote kept its temporary refs. */
function refsLeft(remote: string, t: string, left: { refs: string[]; reason: string }): Problem {
  const them = left.refs.length === 1 ? "it" : "them";
  return {
    code: "push-refs-left",
    message: `the background push to ${remote} after a turn (${t}) went through, but the remote did not let it delete its temporary ${left.refs.length === 1 ? "ref" : "refs"} (${left.reason}): ${left.refs.join(", ")}. No new one is made while ${them} stay; once the remote lets refs under refs/ghostcommit/ be deleted, the next push deletes ${them}`,
  };
}

/** A `push` setting in the workspace's own file, which ghostcommit does not follow. */
function ignoredPushSetting(root: string): Problem {
  return {
    code: "push-setting-ignored",
    message: `${path.join(root, WORKSPACE_CONFIG)} sets "push", which is taken only from your own config (${userConfigPath()}): a repository's settings file comes with a clone and an agent can write it, so it cannot send your work to a remote; move the setting there if it is yours`,
    path: path.join(root, WORKSPACE_CONFIG),
  };
}
