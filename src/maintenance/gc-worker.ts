// Entry point of the detached retention run: `node gc-worker.js ROOT STORE`. Its stderr goes to
// the store's log, so a failure never reaches the agent whose turn started it; the failure is
// logged as an entry of that log, which doctor reports (a gc failing every day lets the store grow).
import type { StoreKind } from "../config.js";
import { StoreContext } from "../store/context.js";
import { appendHookLog } from "./hook-log.js";
import { runRetention } from "./retention.js";

const [root, store] = process.argv.slice(2);
let context: StoreContext | undefined;
try {
  context = await StoreContext.open(root, { store: store as StoreKind });
  await runRetention(context);
} catch (error) {
  const message = `the background gc after a turn failed: ${(error as Error).message}`;
  if (context) await appendHookLog(context.paths.logFile, { level: "error", agent: "gc", message });
  else process.stderr.write(`${new Date().toISOString()} ${message}\n`);
  process.exitCode = 1;
}
