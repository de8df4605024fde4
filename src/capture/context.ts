import type { Settings } from "../config.js";
import type { CatFile } from "../git/cat-file.js";
import type { LooseObjectWriter } from "../git/loose-objects.js";
import type { WrittenObjects } from "../git/objects.js";
import type { RelPath } from "../paths.js";
import type { StorePaths } from "../store/layout.js";
import type { StoredExclusion } from "../store/metadata.js";
import type { WorkspaceLocation } from "../git/repository.js";
import type { HashCache } from "./hash-cache.js";
import type { OutsideRules } from "../store/metadata.js";
import type { DeferredBuild } from "./status-cache.js";

/** Everything one capture needs: where the workspace and store are, and the open git helpers. */
export interface CaptureContext {
  location: WorkspaceLocation;
  paths: StorePaths;
  settings: Settings;
  writer: LooseObjectWriter;
  cat: CatFile;
  cache: HashCache;
  /** Environment for git commands that read objects through the store. */
  readEnv: NodeJS.ProcessEnv;
  /** Starts, where it can, the process of a deferred private-copy build early (see status-cache.ts). */
  prepareStatusBuild?: () => DeferredBuild;
}

/** The captured state of a workspace: a tree plus what was left out. */
export interface Captured {
  tree: string;
  parent: string | null;
  fileCount: number;
  excluded: StoredExclusion[];
  /** Ignored paths force-included or touched: captured, or proven absent then (so a restore of the snapshot deletes them). */
  included: RelPath[];
  /** Git repositories nested in the workspace whose files were captured by their own rules. */
  nested?: RelPath[];
  /** The ignore rules outside the tree (git workspaces). */
  outside?: OutsideRules;
  /** Status read the user's index: a detached process is to make the private copy. */
  statusCopyDeferred?: DeferredBuild;
  /** The objects this capture stored (the repo store checks they outlive a prune of the user's). */
  written?: WrittenObjects;
}
