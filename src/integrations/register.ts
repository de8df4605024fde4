import { doctorChecks } from "../api.js";
import { checkHookLog } from "./log.js";

// Imported for its effect (by the CLI and the library entry point): `doctor` shows hook failures.
doctorChecks.push(checkHookLog);
