import type { HeadMoved } from "./types.js";
/**
 * What each error code carries besides its message, as the library's `error.data`: every field here
 * is part of the contract of that code. The CLI's `--json` error document carries the code and
 * message, and for a refusal its paths (`errorDocument`).
 */
export interface ErrorData {
  usage: Record<never, never>;
  "not-found": { id?: string; session?: string; turn?: string };
  "ambiguous-id": { id: string; candidates?: string[] };
  "bad-id": { id: string };
  "outside-workspace": { path: string };
  "not-a-workspace": { path: string };
  "git-failed": { args?: string[]; exitCode?: number | null; stderr?: string; url?: string };
  "git-too-old": { version?: string };
  "store-damaged": { oid?: string; file?: string; url?: string };
  /** A refusal: these paths changed since the session last did (or would be sent, for push). */
  conflict: {
    session?: string;
    conflicts: string[];
    /** rewind: those of `conflicts` that may be another session's work (or came after an interrupt). */
    uncertain?: string[];
    /** rewind: those of `uncertain` changed after the last tool call that could have changed them (a person's edit, perhaps). */
    afterLastTool?: string[];
    /** rewind: those of `conflicts` the repository ignored at the end of the turn that changed them. */
    ignoredAtEnd?: string[];
    /** rewind: those of `conflicts` someone else changed between two of the turns being rewound. */
    betweenTurns?: string[];
    /** push: the snapshots holding the ignored files, or the machines that pushed the conflicting sessions. */
    snapshots?: string[];
    pushedFrom?: string[];
    /** A dry run's refusal: what a forced run would write and delete. */
    forced?: { written: string[]; deleted: string[] };
    /** restore, rewind, redo: git's HEAD moved since those files were captured (see HeadMoved). */
    head?: HeadMoved;
  };
  "open-turn": { session: string; turn: string };
  disabled: Record<never, never>;
  locked: { file: string };
  /** A file-system failure, with the path and the system's error code (ENOSPC, EACCES…). */
  io: { path?: string; errno?: string };
  "bad-config": { file?: string; key?: string; source?: string };
  "bad-input": { session?: string; turn?: string; file?: string };
  "no-session": Record<never, never>;
  "nothing-to-redo": { session?: string };
  /** A refusal: the rewind (or redo: no turn) would no longer do what the caller's `expect` says (nothing changed). */
  "plan-changed": { session: string; turn?: string };
  /** The caller's `signal` aborted a restore, rewind or redo before its first file was written. */
  cancelled: Record<never, never>;
}

/** Stable error codes. The CLI maps them to exit statuses; JSON output carries them verbatim. */
export type ErrorCode = keyof ErrorData;

/** Marks ghostcommit's errors across copies of this module (see `Symbol.hasInstance` below). */
const BRAND = Symbol.for("ghostcommit.error");

/** Every failure ghostcommit reports is one of these; `code` is stable, `message` is for people. */
export class GhostcommitError<C extends ErrorCode = ErrorCode> extends Error {
  /**
   * `instanceof` holds for an error of another copy of this class too: modules loaded beside the
   * command-line bundle (the picker) or a library user's second install have their own copy, and
   * their checks missed the bundle's errors (the picker's "rewind anyway?" never showed).
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  readonly [BRAND] = true;
  readonly code: C;
  readonly data: ErrorData[C];
  /**
   * A refusal the caller may override with `force` (a rewind or redo over later edits or an open
   * turn). The message does not say how: each surface names its own way (see `messageWith`).
   */
  forceable = false;

  constructor(code: C, message: string, ...rest: DataArgs<C>) {
    const [data, cause] = rest as [ErrorData[C] | undefined, unknown];
    super(message, cause === undefined ? undefined : { cause });
    this.name = "GhostcommitError";
    this.code = code;
    this.data = data ?? ({} as ErrorData[C]);
  }

  /** Narrows to one code, so its data is typed: `if (GhostcommitError.is(e, "conflict")) e.data.conflicts`. */
  static is<K extends ErrorCode>(error: unknown, code: K): error is GhostcommitError<K> {
    return error instanceof GhostcommitError && error.code === code;
  }

  toJSON(): { code: C; message: string } & ErrorData[C] {
    return { code: this.code, message: this.message, ...this.data };
  }
}

/** Codes whose data has a required field must be given it; the others may omit it. */
type DataArgs<C extends ErrorCode> =
  Partial<ErrorData[C]> extends ErrorData[C]
    ? [data?: ErrorData[C], cause?: unknown]
    : [data: ErrorData[C], cause?: unknown];

/**
 * The error's message for a surface that overrides a refusal with `force`, named as that surface
 * names it (`--force`, an MCP tool's `force: true`); null where the surface has its own control
 * (the web timeline's "anyway" buttons) or none.
 */
export function messageWith(error: unknown, force: string | null): string {
  const message = error instanceof Error ? error.message : String(error);
  // Read as a property: the bundled command line and the library each carry their own class.
  const refusal = error as Partial<GhostcommitError> | null;
  if (force === null || refusal?.forceable !== true) return message;
  return refusal.code === "open-turn" ? `${message}, or use ${force}` : `${message}, ${force} overwrites`;
}

/**
 * The error document of `--json` output, which an MCP tool's error result and the web timeline's
 * also carry: the code and message, and for a refusal the paths it names.
 */
export function errorDocument(error: unknown, force: string | null): Record<string, unknown> {
  const known = error instanceof GhostcommitError;
  const message = messageWith(error, force);
  const doc: Record<string, unknown> = { error: { code: known ? error.code : "internal", message } };
  if (GhostcommitError.is(error, "conflict")) {
    doc.conflicts = error.data.conflicts;
    if (error.data.uncertain) doc.uncertain = error.data.uncertain;
    if (error.data.afterLastTool) doc.afterLastTool = error.data.afterLastTool;
    if (error.data.ignoredAtEnd) doc.ignoredAtEnd = error.data.ignoredAtEnd;
    if (error.data.betweenTurns) doc.betweenTurns = error.data.betweenTurns;
    if (error.data.forced) doc.forced = error.data.forced;
    if (error.data.head) doc.head = error.data.head;
  } else if (exitStatusFor(error) === 3) {
    doc.conflicts = []; // every refusal has the list; an open turn or a changed plan names no path
  }
  return doc;
}

/** Exit status for an error, per the CLI contract: 2 usage, 3 refused, 1 anything else. */
export function exitStatusFor(error: unknown): number {
  if (error instanceof GhostcommitError) {
    if (error.code === "usage") return 2;
    if (error.code === "conflict" || error.code === "open-turn" || error.code === "plan-changed") return 3;
  }
  return 1;
}

/**
 * Maps a file-system failure to a typed error at the boundary where it happens, naming the path;
 * anything else (already typed, or a bug) passes through unchanged.
 */
export function fsError(error: unknown, action: string, path: string): unknown {
  if (error instanceof GhostcommitError) return error;
  const errno = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof errno !== "string") return error;
  return new GhostcommitError("io", `cannot ${action} ${path}: ${explained(errno)}`, { path, errno }, error);
}

/** What the system's codes a person may meet mean; the code itself stays, to be searched for. */
const ERRNO_MEANING: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOTDIR: "a part of the path is a file, not a directory",
  ENOENT: "no such file or directory",
  EISDIR: "is a directory",
  EMFILE: "too many open files",
  ENAMETOOLONG: "file name too long",
  EIO: "input/output error",
};

export function explained(errno: string): string {
  const meaning = ERRNO_MEANING[errno];
  return meaning ? `${meaning} (${errno})` : errno;
}

/**
 * An error as the faces (CLI, MCP) report it: a file-system failure that reached them untyped
 * becomes `io` with its path and system code (ENOSPC, EACCES…) instead of an internal error.
 */
export function reportable(error: unknown): unknown {
  if (error instanceof GhostcommitError) return error;
  const failure = error as (NodeJS.ErrnoException & { path?: string }) | null;
  if (typeof failure?.code !== "string" || typeof failure.syscall !== "string") return error;
  const where = typeof failure.path === "string" ? ` ${failure.path}` : "";
  return new GhostcommitError(
    "io",
    `${failure.syscall}${where}: ${explained(failure.code)}`,
    { path: failure.path, errno: failure.code },
    error,
  );
}

/** A library argument of the wrong shape is a usage error, as a bad flag is on the command line. */
export function checkArgument(ok: boolean, message: string): void {
  if (!ok) throw new GhostcommitError("usage", message);
}

/**
 * A library call's options checked as the command line checks its flags: an object (left out:
 * `{}`) whose `booleans` are booleans, `strings` strings and `lists` lists of strings, where given,
 * and no key but those and `others` (checked by the caller). A misspelled `dryrun` must not turn
 * a preview into a restore, as `--dryrun` does not on the command line.
 */
export function checkedOptions<T extends object>(
  options: T | undefined,
  name: string,
  kinds: { booleans?: string[]; strings?: string[]; lists?: string[]; others?: string[] },
): T {
  if (options === undefined) return {} as T;
  checkArgument(
    typeof options === "object" && options !== null && !Array.isArray(options),
    `${name} takes an options object`,
  );
  const values = options as Record<string, unknown>;
  const known = [kinds.booleans, kinds.strings, kinds.lists, kinds.others].flatMap((keys) => keys ?? []);
  for (const key of Object.keys(values)) {
    if (known.includes(key)) continue;
    // A flag's spelling (`include-ignored`) or another case names the option all the same.
    const loose = (k: string) => k.toLowerCase().replace(/[-_]/g, "");
    const meant = known.find((k) => loose(k) === loose(key));
    const hint = meant
      ? ` (did you mean ${meant}?)`
      : known.length > 0
        ? ` (it takes ${known.join(", ")})`
        : "";
    checkArgument(false, `${name}: unknown option ${JSON.stringify(key)}${hint}`);
  }
  const wrong = (keys: string[] | undefined, ok: (v: unknown) => boolean, what: string) => {
    for (const key of keys ?? [])
      checkArgument(values[key] === undefined || ok(values[key]), `${name}: ${key} must be ${what}`);
  };
  wrong(kinds.booleans, (v) => typeof v === "boolean", "true or false");
  wrong(kinds.strings, (v) => typeof v === "string", "a string");
  wrong(kinds.lists, isStringList, "a list of strings");
  // A controller passed for its signal would be ignored: the restore would run, not be cancellable.
  const signals = (kinds.others ?? []).filter((key) => key === "signal");
  wrong(signals, (v) => v instanceof AbortSignal, "an AbortSignal (an AbortController's .signal)");
  return options;
}

export function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((s) => typeof s === "string");
}
