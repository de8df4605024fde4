// Entry point of the background push after a turn: `node push-worker.js ROOT STORE REMOTE`. Its
// stderr is the store's push log; the outcome is recorded for `doctor`, never shown to the agent.
import type { StoreKind } from "../config.js";
import { StoreContext } from "../store/context.js";
import { COMMAND_LINE_OPTION_NAMES } from "../store/option-names.js";
import { runBackgroundPush } from "./auto-push.js";

const [root, store, remote] = process.argv.slice(2);
try {
  const context = await StoreContext.open(root, { store: store as StoreKind });
  // What it records is read by `doctor`, whose advice names the command line's flags.
  context.optionNames = COMMAND_LINE_OPTION_NAMES;
  await runBackgroundPush(context, root, remote);
} catch {
  process.exitCode = 1; // already recorded by runBackgroundPush
}
