import { checkedOptions, GhostcommitError, isStringList } from "../errors.js";
import type { ExpectedRedo, ExpectedRewind } from "../types.js";
import { isStateMap } from "./overridden-state.js";

/*
 * The plan a caller showed (a dry run's report, sent back as `expect`): a rewind or redo that would
 * now do something else is refused. A key the report never has (a misspelled `deleteed`) is refused
 * too: ignored, it left that part of the plan unchecked, and the rewind ran over what was not shown.
 */

/** Every key of a dry run's report, which callers send back whole. */
const REPORT_KEYS = {
  lists: ["written", "deleted", "overridden", "paths"],
  strings: ["session", "to"],
  booleans: ["dryRun"],
  others: ["overriddenState", "resumed", "skipped", "safety"],
};

/** `value` checked as an `ExpectedRewind` (named `name` in the error); undefined when absent. */
export function expectedRewind(value: unknown, name: string): ExpectedRewind | undefined {
  return expected<ExpectedRewind>(value, name, "rewoundTurns");
}

/** `value` checked as an `ExpectedRedo` (named `name` in the error); undefined when absent. */
export function expectedRedo(value: unknown, name: string): ExpectedRedo | undefined {
  return expected<ExpectedRedo>(value, name, "restoredTurns");
}

function expected<T>(value: unknown, name: string, turns: string): T | undefined {
  if (value === undefined) return undefined;
  const plan = value as Record<string, unknown> | null;
  const valid =
    typeof plan === "object" &&
    plan !== null &&
    isStringList(plan[turns]) &&
    isStateMap(plan.overriddenState);
  if (!valid)
    throw new GhostcommitError(
      "usage",
      `${name} must be {${turns}, written?, deleted?, overridden?, overriddenState?}: lists of strings, and strings by path`,
    );
  checkedOptions(plan, name, { ...REPORT_KEYS, lists: [turns, ...REPORT_KEYS.lists] });
  return value as T;
}
