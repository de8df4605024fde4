import { doctorChecks } from "../api.js";
import { checkInstalledHooks } from "./hook-check.js";
import { checkHookLog } from "./log.js";

// Imported for its effect (by the CLI and the library entry point): `doctor` shows hook failures
// and installed hooks that no longer run.
doctorChecks.push(checkHookLog, checkInstalledHooks);
