// What push and fetch take and report.

export interface PushOptions {
  /** A remote name of the repository (default `origin`), a URL or a path. */
  remote?: string;
  /**
   * Only a remote configured in the repository (a URL or a path is refused): what the MCP server
   * lets a model name, so a prompt cannot choose where the history goes.
   */
  configuredRemoteOnly?: boolean;
  /** Only these sessions (default: every session). */
  sessions?: string[];
  /** Plain snapshots (not part of a session) too. */
  snapshots?: boolean;
  /** Send snapshots that hold files the repository ignores (refused by default). */
  includeIgnored?: boolean;
}

export interface PushReport {
  remote: string;
  url: string;
  /** Sessions whose journal was sent (new on the remote, or grown since the last push). */
  sessions: { session: string; turns: number; status: "created" | "updated" }[];
  /** Sessions already up to date on the remote. */
  unchanged: string[];
  /** Sessions the remote holds later turns of (pushed from elsewhere): nothing to send, `fetch` brings them. */
  behind: string[];
  /** Snapshots sent (already there ones are not sent again). */
  snapshots: string[];
  /** Remote refs created or updated, in one atomic transaction. */
  refs: number;
  /** Approximate size (as stored) of the objects sent. */
  bytes: number;
  /**
   * Sessions left out because the remote holds a different history under their id (the push
   * after a turn only: a push by hand is refused whole instead).
   */
  leftOut?: { session: string; host: string }[];
  /**
   * Temporary refs (`carriers/`) still on the remote after the push, and why: the remote refused
   * to delete them, or could not be reached for it. No new one is made while one is there; each
   * push tries to delete them again.
   */
  refsLeft?: { refs: string[]; reason: string };
}

export interface FetchOptions {
  /** A remote name of the repository (default `origin`), a URL or a path. */
  remote?: string;
  /**
   * Only a remote configured in the repository (a URL or a path is refused): what the MCP server
   * lets a model name, so a prompt cannot choose where the history goes.
   */
  configuredRemoteOnly?: boolean;
}

export interface FetchReport {
  remote: string;
  url: string;
  /** Sessions whose journal was written here: new, or grown on the remote. */
  sessions: { session: string; turns: number; status: "created" | "updated" }[];
  unchanged: string[];
  /** Sessions kept as they are here because this workspace has a different history under the same id. */
  conflicts: { session: string; reason: string }[];
  /** Snapshots that were not in this store before. */
  snapshots: string[];
  /** Size of the packs received. */
  bytes: number;
  /**
   * The other workspaces whose sessions the remote holds (a subdirectory's, pushed from there),
   * which this fetch does not bring: each named by its folder relative to the repository's root
   * ("." for the root; null for a plain directory's or a folder HEAD lacks, or any folder when
   * this workspace is a plain directory); `of`: a repository's folder or a plain directory.
   */
  elsewhere: { folder: string | null; sessions: number; of: "repository" | "plain" }[];
}
