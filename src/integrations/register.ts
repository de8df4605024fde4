import { doctorChecks } from "../api.js";
import { checkHookLog } from "./log.js";

// Imported for its effect by the CLI: `doctor` shows hook failures.
doctorChecks.push(checkHookLog);
