import { humanText } from "../util/format.js";
import { readAllJournals } from "../session/journal.js";
import { interruptedHint } from "../session/rewind-resume.js";
import type { StoreContext } from "../store/context.js";
import { deadRestoreJournals, interruptedRestores } from "../store/restore-journal.js";
import { namedIn } from "./store-check.js";
import type { DoctorCheck } from "./doctor.js";
import { checkHookLog } from "./hook-log.js";
import { checkForeignOwned } from "./owner-check.js";
import { checkBackgroundPush } from "./push-check.js";
import { checkStoreSize } from "./store-size-check.js";
import { checkGoneWorkspaceRefs } from "./gone-workspace-refs.js";

/**
 * Doctor check: a session's rewind that has not finished. A rewind killed mid-restore is already
 * named by its restore's state file (with the same way on); this finds the rest: one that could
 * not write some files (a full disk), or was killed just before its restore began or just after it
 * ended. Until it is finished or undone, the session's next rewind is refused.
 */
export const checkPendingRewinds: DoctorCheck = async (engine: StoreContext) => {
  const dead = await Promise.all((await deadRestoreJournals(engine.paths)).map((file) => namedIn(file)));
  const named = new Set([...(await interruptedRestores(engine.paths)), ...dead].map((r) => r.safety));
  return (await readAllJournals(engine.paths.sessionsDir)).flatMap((state) =>
    state.redoStack
      .filter((rewind) => rewind.pending && !named.has(rewind.safety))
      .map((rewind) => ({
        code: "unfinished-rewind" as const,
        message: `the rewind of session ${humanText(state.session)} to turn ${humanText(rewind.to)}${rewind.paths ? " (some paths)" : ""} did not finish: ${interruptedHint(state.session, rewind.to, rewind.paths)}`,
      })),
  );
};

/** The checks of the layers above the store that every `doctor` runs (the CLI adds the hooks'). */
export const layerChecks: DoctorCheck[] = [
  checkHookLog,
  checkBackgroundPush,
  checkPendingRewinds,
  checkStoreSize,
  checkForeignOwned,
  checkGoneWorkspaceRefs,
];
