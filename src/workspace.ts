import { takeSnapshot } from "./capture/snapshot.js";
import { existsSync, lstatSync } from "node:fs";
import path from "node:path";
import { checkStoreKind, type StoreKind } from "./config.js";
import { StoreContext } from "./store/context.js";
import { checkArgument, checkedOptions, GhostcommitError, isStringList } from "./errors.js";
import { runGit, splitNul } from "./git/exec.js";
import { MODE } from "./git/objects.js";
import { directoryNamed, displayPath, relFromBytes, resolveInside } from "./paths.js";
import { refuseUnmatched, resolveNamedPaths } from "./restore/path-filter.js";
import { displayOutcome } from "./restore/outcome.js";
import { restoreSnapshot } from "./restore/restore-snapshot.js";
import { diffEntries, diffTreesText } from "./restore/tree-diff.js";
import { withDiffTrees } from "./restore/diff-trees.js";
import { dropSnapshots, toSnapshot, toSummary } from "./store/snapshots.js";
import { type DoctorCheck, runDoctor } from "./maintenance/doctor.js";
import { layerChecks } from "./maintenance/checks.js";
import { PushAfterTurn } from "./session/auto-push.js";
import { fetchWorkspace } from "./session/fetch.js";
import { pushWorkspace } from "./session/push.js";
import {
  maybeRunRetention,
  prepareRetention,
  collectAndForget,
  manualPolicy,
} from "./maintenance/retention.js";
import type { WorkerAfterCommand } from "./util/detached.js";
import { latestSessionId, listSessions, Session } from "./session/handle.js";
import { undoneSinceLastBegin } from "./session/undo-events.js";
import type {
  DoctorReport,
  FetchOptions,
  FetchReport,
  GcOptions,
  PushOptions,
  PushReport,
  GcReport,
  DiffEntry,
  DiffOptions,
  OpenOptions,
  RestoreOptions,
  RestoreReport,
  SnapshotTaken,
  SnapshotDetails,
  SnapshotOptions,
  SnapshotSummary,
  SessionHandle,
  SessionSummary,
  UndoEvent,
} from "./types.js";

/** A workspace and its store: the library's entry point. */
export class Workspace {
  constructor(
    /** @internal */ readonly engine: StoreContext,
    /** The directory the workspace was opened from (as given). */
    readonly cwd: string,
  ) {}

  /** Real path of the workspace directory. */
  get root(): string {
    return this.engine.root;
  }

  /** Git workspaces: the root of the work tree they are in (the workspace's own root, or above it). */
  get repositoryRoot(): string | undefined {
    return this.engine.location.worktreeRoot;
  }

  /** "git" inside a work tree, "plain" otherwise. */
  get kind(): "git" | "plain" {
    return this.engine.location.kind;
  }

  get store(): StoreKind {
    return this.engine.refs.kind;
  }

  /** False when the workspace's config says `"enabled": false`: nothing is captured or written. */
  get enabled(): boolean {
    return this.engine.currentSettings().enabled;
  }

  /** The workspace's log (hook failures and background runs), inside its store. */
  get logFile(): string {
    return this.engine.paths.logFile;
  }

  /** A session's (its id or handle) rewinds and redos since its last turn began, oldest first: what its model has not been told. */
  async undoneSinceLastTurn(session: string | SessionHandle): Promise<UndoEvent[]> {
    const id = typeof session === "object" && session !== null ? session.id : session;
    checkArgument(typeof id === "string" && id !== "", "undoneSinceLastTurn needs a session id or handle");
    this.engine.assertPresent();
    return undoneSinceLastBegin(this.engine, id);
  }

  /** Takes a snapshot of the whole workspace. Never touches the user's index or repository state. */
  async snapshot(options?: SnapshotOptions): Promise<SnapshotTaken> {
    const { include = [], message: given = "" } = checkedOptions(options, "snapshot", {
      others: ["include", "message"],
    });
    checkArgument(isStringList(include), "snapshot: include must be a list of paths");
    checkArgument(typeof given === "string", "snapshot: message must be a string");
    checkArgument(!include.includes(""), "an include path cannot be empty (`.` names the whole workspace)");
    const includes = include.map((p) => resolveInside(this.root, this.root, p));
    const message = given.trim() || "snapshot";
    const retention = prepareRetention(this.engine);
    const stored = await this.engine.capturing(() =>
      this.engine.withReader((cat) => takeSnapshot(this.engine, cat, includes, { message })),
    );
    // At most once a day; the store stays bounded unattended.
    await maybeRunRetention(this.engine, Date.now(), retention);
    // Scripts pass an include whether it exists or not, so not an error; but a typo, or a pattern
    // no shell expanded, would otherwise capture nothing without a word.
    const missing = include.filter((p) => !lstatSync(path.resolve(this.root, p), { throwIfNoEntry: false }));
    const taken: SnapshotTaken = toSnapshot(stored);
    if (missing.length > 0) taken.missingIncludes = missing;
    return taken;
  }

  /** Snapshots of this workspace, newest first. */
  async list(): Promise<SnapshotSummary[]> {
    this.engine.assertPresent(); // a repository's store goes with it: the list would be empty
    return (await this.engine.refs.list()).map(toSummary);
  }

  /** One snapshot with its file list. */
  async show(id: string): Promise<SnapshotDetails> {
    this.engine.assertPresent();
    const stored = await this.engine.refs.resolve(id);
    const result = await runGit(["ls-tree", "-r", "-z", "--name-only", stored.tree], {
      cwd: this.engine.paths.dir,
      env: this.engine.readEnv,
    });
    return { ...toSnapshot(stored), files: splitNul(result.stdout).map((b) => displayPath(relFromBytes(b))) };
  }

  /**
   * Changes from snapshot `id` to snapshot `id2`, or to the working tree when `id2` is omitted;
   * `paths` (relative to the workspace) limits it to those paths and everything below them.
   */
  async diff(id: string, id2?: string, given?: DiffOptions): Promise<DiffEntry[]> {
    const options = checkedOptions(given, "diff", { others: ["paths"] });
    const named = resolveNamedPaths(this.root, options.paths);
    return withDiffTrees(this.engine, id, id2, named, (from, to, out, paths) =>
      diffEntries(this.engine, from, to, paths, out),
    );
  }

  /** The same diff as git prints it: "patch", "stat" or "name-status". */
  async diffText(
    format: "patch" | "stat" | "name-status",
    id: string,
    id2?: string,
    given?: DiffOptions,
  ): Promise<string> {
    const options = checkedOptions(given, "diffText", { others: ["paths"] });
    checkArgument(
      ["patch", "stat", "name-status"].includes(format),
      "diffText's format is patch, stat or name-status",
    );
    const named = resolveNamedPaths(this.root, options.paths);
    return withDiffTrees(this.engine, id, id2, named, (a, b, out, paths) =>
      diffTreesText(this.engine, format, a, b, paths, out),
    );
  }

  /** @internal Both diffs of one capture of the working tree (two would differ if an agent writes). */
  async diffWithPatch(id: string, id2?: string): Promise<{ entries: DiffEntry[]; patch: string }> {
    return withDiffTrees(this.engine, id, id2, undefined, async (from, to, out) => {
      const [entries, patch] = await Promise.all([
        diffEntries(this.engine, from, to, undefined, out),
        diffTreesText(this.engine, "patch", from, to, undefined, out),
      ]);
      return { entries, patch };
    });
  }

  /** Makes the workspace's capture set equal to snapshot `id`: a safety snapshot first, proven deletions only. */
  async restore(id: string, given?: RestoreOptions): Promise<RestoreReport> {
    const options = checkedOptions(given, "restore", { booleans: ["dryRun"], others: ["paths", "signal"] });
    const named = resolveNamedPaths(this.root, options.paths);
    this.engine.assertCapturable();
    this.engine.assertEnabled();
    const target = await this.engine.refs.resolve(id);
    const result = await this.engine.capturing(() =>
      this.engine.withReader(async (cat) => {
        const matched = await refuseUnmatched(named, cat, [target.tree], this.root);
        return restoreSnapshot(this.engine, cat, target, !!options.dryRun, matched, options.signal);
      }),
    );
    const report: RestoreReport = {
      ...displayOutcome(result),
    };
    if (options.dryRun) report.dryRun = true;
    return report;
  }

  /** Expires snapshots by hand with the retention policy (protected ones are always kept) and packs the store. */
  async gc(given?: GcOptions): Promise<GcReport> {
    const options = checkedOptions(given, "gc", { others: ["olderThanMs", "keep"] });
    this.engine.assertPresent();
    // No store (never enabled, or nothing ever taken while enabled): nothing to collect, nothing to create.
    if (!existsSync(this.engine.paths.dir))
      return { dropped: [], kept: [], bytesBefore: 0, bytesAfter: 0, forgottenSessions: 0 };
    return collectAndForget(this.engine, manualPolicy(this.engine.settings, options));
  }

  /** Checks git, the store and leftovers of interrupted runs (plus `checks` of the layers above). */
  async doctor(options?: { repair?: boolean; checks?: DoctorCheck[] }): Promise<DoctorReport> {
    this.engine.assertPresent();
    return runDoctor(this.engine, layerChecks, options);
  }

  /** The session `id` of this workspace (created by its first turn or touch). */
  session(id: string): SessionHandle {
    // After a turn ends: the configured background push (never waited for; prepared before, so
    // its process can start beside the turn's status), and at most once a day retention, so the
    // store stays bounded unattended.
    let push: PushAfterTurn | null = null;
    let retention: WorkerAfterCommand | null = null;
    return new Session(
      this.engine,
      this.cwd,
      id,
      () => {
        (push ?? new PushAfterTurn(this.engine)).start();
        const prepared = retention;
        push = null;
        retention = null;
        return maybeRunRetention(this.engine, Date.now(), prepared);
      },
      () => {
        push = new PushAfterTurn(this.engine);
        retention = prepareRetention(this.engine);
      },
    );
  }

  /** Sessions of this workspace, most recently active first. */
  async sessions(): Promise<SessionSummary[]> {
    this.engine.assertPresent();
    return listSessions(this.engine);
  }

  /** The most recently active session, or null when there is none. */
  async latestSession(): Promise<SessionHandle | null> {
    this.engine.assertPresent();
    const id = await latestSessionId(this.engine);
    return id === null ? null : this.session(id);
  }

  /** Sends sessions (and with `snapshots`, plain snapshots) to a git remote under refs/ghostcommit/. */
  async push(options?: PushOptions): Promise<PushReport> {
    const booleans = ["configuredRemoteOnly", "snapshots", "includeIgnored"];
    const kinds = { booleans, strings: ["remote"], lists: ["sessions"] };
    return pushWorkspace(this.engine, this.cwd, checkedOptions(options, "push", kinds));
  }

  /** Brings a git remote's sessions and snapshots into this workspace's store. */
  async fetch(options?: FetchOptions): Promise<FetchReport> {
    const kinds = { booleans: ["configuredRemoteOnly"], strings: ["remote"] };
    return fetchWorkspace(this.engine, this.cwd, checkedOptions(options, "fetch", kinds));
  }

  /** Forgets snapshots (their content is freed by the next gc). */
  async drop(ids: string[]): Promise<{ dropped: string[] }> {
    checkArgument(isStringList(ids), "drop takes a list of snapshot ids (strings)");
    if (ids.length === 0) throw new GhostcommitError("usage", "drop needs at least one snapshot id");
    this.engine.assertPresent();
    const resolved: string[] = [];
    for (const id of ids) resolved.push((await this.engine.refs.resolve(id)).id);
    return { dropped: await dropSnapshots(this.engine, resolved) };
  }
}

/** Opens the workspace at `cwd` (default: the current directory). */
export async function openWorkspace(given?: OpenOptions): Promise<Workspace> {
  const options = checkedOptions(given, "openWorkspace", { strings: ["cwd"], others: ["store"] });
  checkStoreKind(options.store, "store"); // as the command line checks --store
  checkArgument(options.cwd !== "", "cwd is empty: leave it out for the current directory");
  // Absolute: later relative paths (touched, progress) resolve against it, wherever the process moves.
  const cwd = directoryNamed(options.cwd);
  const engine = await StoreContext.open(cwd, options.store ? { store: options.store } : {});
  return new Workspace(engine, cwd);
}

export { MODE };
