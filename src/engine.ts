import path from "node:path";
import { captureGit } from "./capture/git-capture.js";
import { capturePlain } from "./capture/plain-capture.js";
import type { CaptureContext, Captured } from "./capture/context.js";
import { HashCache } from "./capture/hash-cache.js";
import { loadSettings, type Settings, type StoreKind } from "./config.js";
import { GhostcommitError } from "./errors.js";
import { CatFile } from "./git/cat-file.js";
import { LooseObjectWriter, serializeCommit } from "./git/objects.js";
import { cleanLeftovers } from "./maintenance/leftovers.js";
import type { RelPath } from "./paths.js";
import { linkBorrowedObjects } from "./store/borrow.js";
import { ensureStore, type StorePaths, storePaths } from "./store/layout.js";
import { encodeMessage, newNonce, nowMicros, type SnapshotMeta } from "./store/metadata.js";
import { type StoredSnapshot, SnapshotRefs } from "./store/store.js";
import { syncFileSystems } from "./util/durable.js";
import { trace } from "./util/trace.js";
import { locateWorkspace, type WorkspaceLocation } from "./workspace.js";

/** Extra facts recorded with a snapshot. */
export interface SnapshotExtras {
  kind?: SnapshotMeta["kind"];
  message?: string;
  session?: string;
  turn?: string;
  guards?: string;
}

/**
 * The core shared by the library, the CLI and the integrations: one workspace, its settings and
 * its store. Operations open git helpers for their own duration and close them.
 */
export class Engine {
  private constructor(
    readonly location: WorkspaceLocation,
    readonly settings: Settings,
    readonly paths: StorePaths,
    readonly refs: SnapshotRefs,
  ) {}

  static async open(cwd: string, overrides: Partial<Settings> = {}): Promise<Engine> {
    const location = await locateWorkspace(cwd);
    const settings = loadSettings(location.root, overrides);
    const kind: StoreKind = location.kind === "plain" && !overrides.store ? "shadow" : settings.store;
    const paths = storePaths(location);
    const refs = new SnapshotRefs(kind, paths, location);
    if (settings.enabled) await ensureStore(paths, location);
    return new Engine(location, settings, paths, refs);
  }

  get root(): string {
    return this.location.root;
  }

  /** Environment for git commands that read objects (the store's git dir sees the user's objects). */
  get readEnv(): NodeJS.ProcessEnv {
    return { GIT_DIR: this.paths.gitDir };
  }

  assertEnabled(): void {
    if (!this.settings.enabled) {
      throw new GhostcommitError("disabled", `ghostcommit is disabled for ${this.root} (enabled: false)`);
    }
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

  /** Captures the workspace as a tree (no commit, no ref). */
  async capture(cat: CatFile, includes: RelPath[]): Promise<Captured> {
    // A restore killed half-way may have left temp files in the workspace: remove them before
    // they could be captured (only those of dead processes; cheap when there are none).
    await cleanLeftovers(this.paths, this.root);
    const cache = new HashCache(this.paths.dir);
    await cache.load();
    const ctx: CaptureContext = {
      location: this.location,
      paths: this.paths,
      settings: this.settings,
      writer: new LooseObjectWriter(this.refs.objectsDir),
      cat,
      cache,
      readEnv: this.readEnv,
    };
    const captured =
      this.location.kind === "git" ? await captureGit(ctx, includes) : await capturePlain(ctx, includes);
    await cache.save().catch(() => {});
    return captured;
  }

  /**
   * Takes a snapshot: capture, commit, protect borrowed objects, then make it reachable.
   * `durable`: it survives a machine crash once this returns, and its ref is never on disk
   * without its objects (a restore's way back, a turn's record).
   */
  async snapshot(
    cat: CatFile,
    includes: RelPath[],
    extras: SnapshotExtras = {},
    durable = false,
  ): Promise<StoredSnapshot> {
    this.assertEnabled();
    const captured = await this.capture(cat, includes);
    const t = nowMicros();
    const meta: SnapshotMeta = {
      v: 1,
      t,
      kind: extras.kind ?? "snapshot",
      message: extras.message ?? "snapshot",
      parent: captured.parent,
      fileCount: captured.fileCount,
      excluded: captured.excluded,
      included: captured.included,
      nonce: newNonce(),
    };
    if (extras.session !== undefined) meta.session = extras.session;
    if (extras.turn !== undefined) meta.turn = extras.turn;
    if (extras.guards !== undefined) meta.guards = extras.guards;
    const writer = new LooseObjectWriter(this.refs.objectsDir);
    const parents = this.refs.kind === "repo" && captured.parent ? [captured.parent] : [];
    const body = serializeCommit({
      tree: captured.tree,
      parents,
      time: Math.floor(t / 1e6),
      message: encodeMessage(meta),
    });
    const id = await writer.write("commit", body);
    trace("snapshot: commit written");
    if (this.refs.kind === "shadow" && this.location.commonDir) {
      await linkBorrowedObjects(
        this.paths.dir,
        this.paths.objectsDir,
        path.join(this.location.commonDir, "objects"),
      );
    }
    trace("snapshot: borrowed objects linked");
    if (durable) {
      // Everything the snapshot needs, wherever it was written: the store, the objects directory
      // written to, and the user's objects it borrows (a recent commit's may not be on disk yet).
      const userObjects = this.location.commonDir ? [path.join(this.location.commonDir, "objects")] : [];
      await syncFileSystems([this.paths.dir, this.refs.objectsDir, ...userObjects]);
      trace("snapshot: flushed to disk");
    }
    await this.refs.add(id, durable);
    trace("snapshot: ref created");
    return { id, tree: captured.tree, meta };
  }
}
