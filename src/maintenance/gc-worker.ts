// Entry point of the detached retention run: `node gc-worker.js ROOT STORE`. Its stderr is the
// store's log, so a failure is recorded there and never reaches the agent whose turn started it.
import type { StoreKind } from "../config.js";
import { StoreContext } from "../store/context.js";
import { runRetention } from "./retention.js";

const [root, store] = process.argv.slice(2);
try {
  const context = await StoreContext.open(root, { store: store as StoreKind });
  await runRetention(context);
} catch (error) {
  process.stderr.write(`${new Date().toISOString()} retention failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
