export { openWorkspace, Workspace } from "./api.js";
export { DEFAULT_SETTINGS, type Settings, type StoreKind } from "./config.js";
export { type ErrorCode, GhostcommitError } from "./errors.js";
// For its effect: the library's `doctor` reports hook failures too, as the CLI's does.
import "./integrations/register.js";
export type * from "./types.js";
