import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { StoreKind } from "../config.js";
import { fsError, GhostcommitError } from "../errors.js";
import { runGit, splitNul } from "../git/exec.js";
import { keptElsewhere, type WorkspaceLocation } from "../git/repository.js";
import { syncDirs, writeFileSynced } from "../util/durable.js";
import { ambiguityMessage, checkedSnapshotId, decodeMessage, type SnapshotMeta } from "./metadata.js";
import { readLooseObject } from "../git/loose-read.js";
import { headlessStore, type StorePaths, storeFrameWhole } from "./layout.js";
import { notFound, unreadableSnapshot } from "./other-store.js";
import { dirsUpTo, refHolds, snapshotOfCommit } from "./ref-files.js";
import { QUIET_REF_CONFIG } from "./ref-updates.js";
import { LIBRARY_OPTION_NAMES, type OptionNames } from "./option-names.js";

/** A snapshot as found in the store: its commit id, tree and metadata. */
export interface StoredSnapshot {
  id: string;
  tree: string;
  meta: SnapshotMeta;
}

/** Where a shadow store keeps its snapshots' refs. */
export const SHADOW_SNAPSHOT_REFS = "refs/ghostcommit/snapshots/";

/**
 * Where snapshot commits and their refs live. Objects are always readable through the private
 * git directory (which borrows the user's objects); only where new objects and refs are written
 * differs between the two kinds.
 */
export class SnapshotRefs {
  readonly kind: StoreKind;
  /** Directory new objects are written to. */
  readonly objectsDir: string;
  /** Git directory holding the refs. */
  readonly refsGitDir: string;
  readonly refPrefix: string;
  /** How the caller names the store option, for a snapshot found only in the other store. */
  optionNames: OptionNames = LIBRARY_OPTION_NAMES;

  constructor(
    kind: StoreKind,
    readonly paths: StorePaths,
    private readonly location: WorkspaceLocation,
  ) {
    this.kind = kind;
    if (kind === "repo") {
      if (!location.commonDir) {
        throw new GhostcommitError("usage", "the repo store needs a git repository; this workspace has none");
      }
      this.objectsDir = path.join(location.commonDir, "objects");
      this.refsGitDir = location.commonDir;
      this.refPrefix = `refs/ghostcommit/${location.key}/snapshots/`;
    } else {
      this.objectsDir = paths.objectsDir;
      this.refsGitDir = paths.gitDir;
      this.refPrefix = SHADOW_SNAPSHOT_REFS;
    }
  }

  /**
   * Where git runs for the refs: the repo store's are in your repository, which is there before
   * this workspace's data directory is (made by its first write): a read before it, or after a
   * write from another worktree only, found no directory to run in.
   */
  private get gitCwd(): string {
    return this.kind === "repo" ? this.location.root : this.paths.dir;
  }

  private async git(args: string[], input?: Buffer | string) {
    try {
      return await runGit([...QUIET_REF_CONFIG, ...args], {
        cwd: this.gitCwd,
        env: { GIT_DIR: this.refsGitDir },
        input,
      });
    } catch (error) {
      this.assertFrame();
      throw error;
    }
  }

  /**
   * A shadow store whose git directory git takes for no repository ("not a git repository"):
   * said as the damage it is, which doctor mends, rather than as git's failure.
   */
  private assertFrame(): void {
    if (this.kind === "shadow" && existsSync(this.refsGitDir) && !storeFrameWhole(this.refsGitDir))
      throw headlessStore(this.refsGitDir);
  }

  /**
   * Makes a snapshot reachable (and so safe from gc). Fails if the ref somehow exists already.
   * `durable`: the ref survives a machine crash once this returns (its objects must already be
   * on disk): its content is fsynced before the rename, its directories after.
   */
  async add(id: string, durable = false): Promise<void> {
    const file = path.join(this.refsGitDir, ...`${this.refPrefix}${id}`.split("/"));
    // The highest directory whose entries may have changed: the parent of the first one
    // created here, or, for the repo store (git creates them), `refs/`.
    let top: string | undefined = path.join(this.refsGitDir, "refs");
    if (this.kind === "shadow") {
      const created = await this.addLooseRef(file, id, durable);
      top = created ? path.dirname(created) : undefined;
    } else {
      // core.fsync=reference: git fsyncs the ref before renaming it into place (git 2.36+).
      const sync = durable ? ["-c", "core.fsync=reference", "-c", "core.fsyncMethod=fsync"] : [];
      await this.git([...sync, "update-ref", "--stdin", "-z"], `create ${this.refPrefix}${id}\0${id}\0`);
    }
    if (durable) await syncDirs(dirsUpTo(path.dirname(file), top));
  }

  /**
   * The store's own refs are written as git writes a loose ref (a `.lock` file created exclusively,
   * then renamed), which saves a git process per snapshot. Each snapshot has its own ref name, so
   * there is never an old value to compare; pack-refs only prunes refs it packed itself.
   */
  private async addLooseRef(file: string, id: string, durable: boolean): Promise<string | undefined> {
    // Only the shadow store writes loose refs itself: private, as everything under the data home.
    // Synchronous calls where nothing waits for the disk: each cheaper than a thread-pool trip.
    const lock = `${file}.lock`;
    try {
      const created = mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      try {
        if (durable) await writeFileSynced(lock, `${id}\n`, 0o600);
        else writeFileSync(lock, `${id}\n`, { flag: "wx", mode: 0o600 });
        renameSync(lock, file);
      } catch (error) {
        // Ours to remove, unless another process holds it.
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") rmSync(lock, { force: true });
        throw error;
      }
      return created;
    } catch (error) {
      throw fsError(error, "write the snapshot's ref", file); // a full disk: said with the file
    }
  }

  /** Forgets snapshots in one all-or-nothing transaction. */
  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const input = ids.map((id) => `delete ${this.refPrefix}${id}\0${id}\0`).join("");
    await this.git(["update-ref", "--stdin", "-z"], input);
  }

  /** The snapshots (newest first); under `prefix`, those a fetch has brought but not listed yet. */
  async list(prefix = this.refPrefix): Promise<StoredSnapshot[]> {
    // No store yet (nothing snapshotted, or the workspace is disabled): nothing to list. A store
    // whose HEAD is gone is not empty, though its snapshots cannot be listed.
    if (!existsSync(path.join(this.refsGitDir, "HEAD"))) {
      if (this.kind === "shadow" && existsSync(this.refsGitDir)) throw headlessStore(this.refsGitDir);
      return [];
    }
    this.assertFrame();
    const result = await runGit(
      [...QUIET_REF_CONFIG, "for-each-ref", "--format=%(objectname)%00%(tree)%00%(contents)%00", prefix],
      { cwd: this.gitCwd, env: { GIT_DIR: this.refsGitDir }, okCodes: [0, 128] },
    );
    // A ref whose commit is gone (a damaged store) makes for-each-ref fail as a whole: read the
    // commits one by one instead, so the other snapshots stay usable.
    if (result.code !== 0) {
      const { snapshots, unreadable } = await this.readCommits(await this.refIds(prefix));
      this.unreadableListed = unreadable;
      return snapshots;
    }
    this.unreadableListed = [];
    const parts = splitNul(result.stdout);
    const snapshots: StoredSnapshot[] = [];
    for (let i = 0; i + 2 < parts.length; i += 3) {
      const id = parts[i].toString("latin1").replace(/^\n/, "");
      const tree = parts[i + 1].toString("latin1");
      const meta = decodeMessage(parts[i + 2].toString("utf8"));
      if (meta && /^[0-9a-f]{40}$/.test(id)) snapshots.push({ id, tree, meta });
    }
    return snapshots.sort((a, b) => b.meta.t - a.meta.t || (a.id < b.id ? -1 : 1));
  }

  /** The ids every snapshot ref points at, without reading any object. */
  async refIds(prefix = this.refPrefix): Promise<string[]> {
    const result = await this.git(["for-each-ref", "--format=%(objectname)", prefix]);
    return result.stdout
      .toString("latin1")
      .split("\n")
      .filter((line) => /^[0-9a-f]{40}$/.test(line));
  }

  /**
   * Reads snapshot commits through one `cat-file --batch`: the readable snapshots (newest
   * first) and the ids whose commit is missing or not a snapshot.
   */
  async readCommits(ids: string[]): Promise<{ snapshots: StoredSnapshot[]; unreadable: string[] }> {
    const snapshots: StoredSnapshot[] = [];
    const unreadable: string[] = [];
    if (ids.length === 0) return { snapshots, unreadable };
    // The repo store's objects are your repository's: read there until the private directory is made.
    const readDir =
      this.kind === "repo" && !existsSync(this.paths.gitDir) ? this.refsGitDir : this.paths.gitDir;
    const result = await runGit(["cat-file", "--batch"], {
      cwd: this.gitCwd,
      env: { GIT_DIR: readDir },
      input: `${ids.join("\n")}\n`,
      okCodes: [0, 128],
    });
    const out = result.stdout;
    let at = 0;
    for (const id of ids) {
      const newline = out.indexOf(0x0a, at);
      if (newline === -1) {
        unreadable.push(id); // cat-file died (a corrupt object): the rest are unknown
        continue;
      }
      const [, type, sizeText] = out.toString("latin1", at, newline).split(" ");
      if (type === undefined || sizeText === undefined) {
        unreadable.push(id);
        at = newline + 1;
        continue;
      }
      const body = out.subarray(newline + 1, newline + 1 + Number(sizeText));
      at = newline + 1 + Number(sizeText) + 1;
      const snapshot = type === "commit" ? snapshotOfCommit(id, body.toString("utf8")) : null;
      if (snapshot) snapshots.push(snapshot);
      else unreadable.push(id);
    }
    snapshots.sort((a, b) => b.meta.t - a.meta.t || (a.id < b.id ? -1 : 1));
    return { snapshots, unreadable };
  }

  /**
   * A snapshot named by its full id, read from the files git keeps (its ref, loose or packed, and
   * its loose commit object) without listing every snapshot; null whenever unsure (a packed
   * object, another ref format), and the caller asks git.
   */
  private async readListed(id: string): Promise<StoredSnapshot | null> {
    if (!(await refHolds(this.refsGitDir, `${this.refPrefix}${id}`, id))) return null;
    const body = readLooseObject(this.objectsDir, id, "commit");
    return body === null ? null : snapshotOfCommit(id, body.toString("utf8"));
  }

  /**
   * The workspace's other store kind when its refs hold snapshot `id` (a session recorded before
   * the workspace's `store` setting changed), else null. Read from ref files; no git process.
   */
  async otherStoreHolding(id: string): Promise<StoreKind | null> {
    const other = this.otherStore();
    if (!other) return null;
    return (await refHolds(other.gitDir, `${other.prefix}${id}`, id)) ? other.kind : null;
  }

  /** The workspace's other store: its kind and where its snapshot refs are (null: it can have none). */
  otherStore(): { kind: StoreKind; gitDir: string; prefix: string } | null {
    if (this.kind === "repo")
      return { kind: "shadow", gitDir: this.paths.gitDir, prefix: SHADOW_SNAPSHOT_REFS };
    const { commonDir, key } = this.location;
    return commonDir
      ? { kind: "repo", gitDir: commonDir, prefix: `refs/ghostcommit/${key}/snapshots/` }
      : null;
  }

  /** Snapshot refs the last `list` left out: their commits are missing or cannot be read (a damaged store). */
  unreadableListed: string[] = [];

  /** Finds a snapshot by full id or unique prefix of at least 7 hex digits. */
  async resolve(given: string): Promise<StoredSnapshot> {
    const wanted = checkedSnapshotId(given);
    this.assertFrame();
    if (wanted.length === 40) {
      const direct = await this.readListed(wanted);
      if (direct) return direct;
    }
    const matches = (await this.list()).filter((s) => s.id.startsWith(wanted));
    const damaged = this.unreadableListed.filter((id) => id.startsWith(wanted));
    if (matches.length === 0 && damaged.length === 1) throw unreadableSnapshot(damaged[0]);
    if (matches.length === 0) {
      const { root, worktreeRoot } = this.location;
      // A subdirectory's workspace: the repository's snapshots are elsewhere, reached as the caller names it.
      const elsewhere = keptElsewhere(root, worktreeRoot, "snapshots", this.optionNames.workspace);
      throw await notFound(given, this.kind, this.otherStore(), elsewhere, this.optionNames);
    }
    if (matches.length > 1) {
      throw new GhostcommitError("ambiguous-id", ambiguityMessage(given, matches), {
        id: given,
        candidates: matches.map((m) => m.id),
      });
    }
    return matches[0];
  }
}
