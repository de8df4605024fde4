import type { Settings, StoreKind } from "../config.js";
import { LiveSettings } from "./live-settings.js";
import type { OptionNames } from "./option-names.js";
import { GhostcommitError } from "../errors.js";
import { CatFile } from "../git/cat-file.js";
import { DIFF_TREE } from "../git/diff-tree.js";
import { GitAhead } from "../git/exec.js";
import { locateWorkspace, type WorkspaceLocation } from "../git/repository.js";
import { isTooBroad, tooBroadError } from "../paths.js";
import path from "node:path";
import { FlushAhead, syncFileSystems } from "../util/durable.js";
import { withSharedLock } from "../util/lock.js";
import { ensureStore, STORE_FILES, type StorePaths, storePaths } from "./layout.js";
import { SnapshotRefs } from "./store.js";
import { adoptPlainHistory, plainStoreOf } from "./adopt-plain.js";
import { existsSync, statSync } from "node:fs";
import { deadPackTemps, removePackTemps } from "./pack-temps.js";

/**
 * One workspace opened with its settings and its store: what every operation above the store
 * layer works with. Opening reads only; the store is created by the first write (or at opening,
 * when a folder that became a repository has a plain store whose history it takes over). Operations open git helpers for their own duration and close them.
 */
export class StoreContext {
  private constructor(
    readonly location: WorkspaceLocation,
    private readonly liveSettings: LiveSettings,
    readonly paths: StorePaths,
    readonly refs: SnapshotRefs,
  ) {}

  static async open(cwd: string, overrides: Partial<Settings> = {}): Promise<StoreContext> {
    const location = await locateWorkspace(cwd);
    const live = new LiveSettings(location.root, overrides, location.worktreeRoot);
    const settings = live.value;
    const kind: StoreKind = location.kind === "plain" && !overrides.store ? "shadow" : settings.store;
    const paths = storePaths(location);
    const refs = new SnapshotRefs(kind, paths, location);
    const context = new StoreContext(location, live, paths, refs);
    // A folder that became a repository: its history comes along before anything reads the store.
    if (
      kind === "shadow" &&
      settings.enabled &&
      !existsSync(path.join(paths.gitDir, "HEAD")) &&
      context.plainStore()
    )
      await context.ensureStore();
    return context;
  }

  /** The folder's store from before it was a git repository, which this one takes over when made. */
  private plainStore(): StorePaths | null {
    return this.refs.kind === "shadow" ? plainStoreOf(this.location) : null;
  }

  private async ensureStore(): Promise<void> {
    await ensureStore(this.paths, this.location, async (staging) => {
      const plain = this.plainStore();
      if (plain) await adoptPlainHistory(staging, this.paths, plain);
    });
  }

  get root(): string {
    return this.location.root;
  }

  /** How the caller names the options an error's advice points to (the library's, by default). */
  get optionNames(): OptionNames {
    return this.refs.optionNames;
  }

  set optionNames(names: OptionNames) {
    this.refs.optionNames = names;
  }

  /** The settings as last read: at opening, or at the latest `assertEnabled` (the store kind stays). */
  get settings(): Settings {
    return this.liveSettings.value;
  }

  /** Environment for git commands that read objects (the store's git dir sees the user's objects). */
  get readEnv(): NodeJS.ProcessEnv {
    return { GIT_DIR: this.paths.gitDir };
  }

  /**
   * Everything a durable snapshot needs on disk: the store, the objects directory written to,
   * and the user's objects it borrows (a recent commit's may not be on disk yet).
   */
  durablePaths(): string[] {
    const userObjects = this.location.commonDir ? [path.join(this.location.commonDir, "objects")] : [];
    return [this.paths.dir, this.refs.objectsDir, ...userObjects];
  }

  private flushReady: FlushAhead | null = null;
  private diffReady: GitAhead | null = null;

  /** The command will diff two trees: a `git diff-tree --stdin` is made ready while its status runs. */
  prepareDiff(): void {
    this.diffReady ??= new GitAhead([...DIFF_TREE, "--stdin"], { cwd: this.paths.dir, env: this.readEnv });
  }

  /** The `diff-tree` made ready, once (see `prepareDiff`); null when there is none. */
  takeDiffAhead(): GitAhead | null {
    const ready = this.diffReady;
    this.diffReady = null;
    return ready;
  }

  /** The next snapshot will be durable: its flush is made ready while its status runs. */
  prepareFlush(): void {
    this.flushReady ??= new FlushAhead(() => this.durablePaths());
  }

  /** Flushes what a durable snapshot needs to disk (see `durablePaths`). */
  async flushToDisk(): Promise<void> {
    const ready = this.flushReady;
    this.flushReady = null;
    const paths = this.durablePaths();
    await (ready ? ready.flush(paths) : syncFileSystems(paths));
  }

  /** The settings as their files say now: read again only when one changed (a stat each). */
  currentSettings(): Settings {
    return this.liveSettings.refresh();
  }

  /**
   * The workspace's directory is still there: one deleted or moved while open is said to be gone,
   * rather than read as a workspace whose every file was deleted (a rewind's conflicts).
   */
  assertPresent(): void {
    if (!statSync(this.root, { throwIfNoEntry: false })?.isDirectory())
      throw new GhostcommitError(
        "not-a-workspace",
        `${this.root} no longer exists (deleted or moved?): nothing was done there`,
        { path: this.root },
      );
  }

  /** Every write and capture begins here, so an open workspace sees `"enabled": false` written since. */
  assertEnabled(): void {
    // Gone, it would read as having no settings files: enabled.
    this.assertPresent();
    if (!this.currentSettings().enabled) {
      throw new GhostcommitError("disabled", `${this.root} is disabled (enabled: false)`);
    }
  }

  /** Refuses to capture the home or root directory (see `isTooBroad`); `advice` in the caller's words. */
  assertCapturable(advice?: string): void {
    if (isTooBroad(this.root)) throw tooBroadError(this.root, advice);
  }

  /** `writing` for work that captures the workspace or writes into it: a snapshot, a turn, a restore. */
  capturing<T>(work: () => Promise<T>): Promise<T> {
    this.assertCapturable();
    return this.writing(work);
  }

  /**
   * Runs work that writes objects or refs. gc waits for such work to finish before it prunes,
   * and such work waits while gc runs, so gc can prune unreachable objects at once without
   * taking an object a snapshot being written still needs.
   */
  async writing<T>(work: () => Promise<T>): Promise<T> {
    // The store is created by the first write, so a command refused for its arguments, or one
    // that only reads, never leaves a store behind (but for a plain store's history, see open).
    this.assertEnabled();
    await this.ensureStore();
    return withSharedLock(
      path.join(this.paths.dir, STORE_FILES.writersDir),
      path.join(this.paths.dir, STORE_FILES.gcLock),
      async () => {
        try {
          return await work();
        } catch (error) {
          // A git that failed mid-write (a full disk) may leave a temp object as large as the file
          // it was adding: left, it takes the room the next snapshot needs. A refusal (a rewind's
          // conflicts) wrote nothing: no look through the objects' directories for it.
          const failedWrite =
            !(error instanceof GhostcommitError) || error.code === "io" || error.code === "git-failed";
          if (failedWrite) await removePackTemps(await deadPackTemps(this)).catch(() => []);
          throw error;
        }
      },
    );
  }

  /** Runs work with an object reader that is closed afterwards. */
  async withReader<T>(work: (cat: CatFile) => Promise<T>): Promise<T> {
    const cat = new CatFile(this.paths.dir, this.readEnv);
    try {
      return await work(cat);
    } finally {
      cat.close();
    }
  }
}
