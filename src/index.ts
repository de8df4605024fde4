/// <reference types="node" preserve="true" />
export { openWorkspace, Workspace } from "./workspace.js";
export { DEFAULT_SETTINGS, type Settings, type StoreKind } from "./config.js";
export { type ErrorCode, GhostcommitError } from "./errors.js";
export type * from "./types.js";
