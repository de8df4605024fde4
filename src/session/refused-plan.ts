import { GhostcommitError } from "../errors.js";
import { quotedPath } from "../util/format.js";
import { withHeadMoved } from "../restore/head-moved.js";
import type { HeadMoved } from "../types.js";

/**
 * A dry run's refusal, with the plan a forced run would carry out (`forced`): what a person
 * deciding on --force needs to see, where git's HEAD moved too. Nothing was to change either way.
 */
export function refusedWithPlan(
  refusal: GhostcommitError,
  plan: { written: string[]; deleted: string[]; head?: HeadMoved },
): unknown {
  const list = (paths: string[]) =>
    paths.length === 0
      ? ""
      : ` (${paths.slice(0, 10).map(quotedPath).join(", ")}${paths.length > 10 ? ", …" : ""})`;
  const files = `${plan.written.length} ${plan.written.length === 1 ? "file" : "files"}`;
  const message = refusal.message.replace(
    /; nothing was changed$/,
    `; forced, it would write ${files}${list(plan.written)} and delete ${plan.deleted.length}${list(plan.deleted)}`,
  );
  const data = GhostcommitError.is(refusal, "conflict") ? refusal.data : { conflicts: [] };
  const error = new GhostcommitError("conflict", message, {
    ...data,
    forced: { written: plan.written, deleted: plan.deleted },
  });
  error.forceable = true;
  return withHeadMoved(error, plan.head);
}
