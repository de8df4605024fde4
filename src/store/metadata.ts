import { GhostcommitError } from "../errors.js";
import { randomHex } from "../util/crypto.js";
import { isWithin, type RelPath } from "../paths.js";
import type { ExclusionReason, SnapshotKind } from "../types.js";
import { isoFromMillis } from "../util/format.js";

/** One file's rules: its patterns match `prefix` + a workspace-relative path. */
export interface RuleLevel {
  prefix: string;
  text: string;
}

/**
 * The ignore rules a snapshot was judged by that its tree cannot hold: `core.excludesFile`,
 * `info/exclude` and, for a subdirectory's workspace, the `.gitignore` and `.ghostignore` files of
 * the directories above it. A restore proves a file absent then only where those rules would have
 * let it in: with them removed since, a file they kept out then (a log, a key) is in the capture
 * now, missing from the snapshot, and not the snapshot's to delete.
 */
export interface OutsideRules {
  /** Hash of the git rules' levels and case rule. */
  git: string;
  /** Git matched them regardless of case (core.ignoreCase). */
  ignoreCase?: true;
  /** Hash of the `.ghostignore` levels, kept where `cut`. */
  ghost?: string;
  /** Lowest precedence first: core.excludesFile, info/exclude, then the `.gitignore` files above, top first. */
  gitLevels?: RuleLevel[];
  /** The `.ghostignore` files above the workspace, nearest first (as the deepest decides). */
  ghostLevels?: RuleLevel[];
  /** A record whose rules were too long to keep in a snapshot's message: only the hashes are known. */
  cut?: true;
}

/** An exclusion as stored: the path stays a RelPath (binary string) so odd names survive. */
export interface StoredExclusion {
  path: RelPath;
  reason: ExclusionReason;
  bytes?: number;
  files?: number;
}

/**
 * Everything a snapshot knows besides its tree, kept in its commit message so the two can never
 * disagree or be written half: one object, one ref.
 */
export interface SnapshotMeta {
  v: 1;
  /** Creation time in microseconds since the epoch: orders snapshots below a second. */
  t: number;
  kind: SnapshotKind;
  message: string;
  parent: string | null;
  fileCount: number;
  excluded: StoredExclusion[];
  /** Ignored paths force-included or touched: captured, or proven absent then. */
  included: RelPath[];
  /** Nested git repositories captured by their own rules: their ignore rules decide deletion proofs. */
  nested?: RelPath[];
  /** The ignore rules outside the tree it was taken under (see OutsideRules); absent before they were kept. */
  outside?: OutsideRules;
  session?: string;
  turn?: string;
  /** For safety snapshots: the snapshot being restored. */
  guards?: string;
  nonce: string;
}

const SUBJECT_PREFIX = "ghostcommit ";

/** Microseconds since the epoch, from a clock that is monotonic within this process. */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

export function newNonce(): string {
  return randomHex(8);
}

export function encodeMessage(meta: SnapshotMeta): string {
  // git cuts a message at a NUL byte (a prompt may hold one): the record below would be lost.
  const subject = meta.message.split("\n")[0].slice(0, 200).replaceAll("\0", "\\0");
  return `${SUBJECT_PREFIX}${meta.kind}: ${subject}\n\n${JSON.stringify(meta)}\n`;
}

/** Parses a snapshot commit message; null when it is not one of ours. */
export function decodeMessage(message: string): SnapshotMeta | null {
  if (!message.startsWith(SUBJECT_PREFIX)) return null;
  const body = message.slice(message.indexOf("\n\n") + 2).trim();
  try {
    const meta = JSON.parse(body) as SnapshotMeta;
    return meta && meta.v === 1 && typeof meta.t === "number" ? meta : null;
  } catch {
    return null;
  }
}

export function isoFromMicros(t: number): string {
  const micros = String(t % 1000).padStart(3, "0");
  return isoFromMillis(Math.floor(t / 1000)).replace("Z", `${micros}Z`);
}

/** Whether a snapshot left `rel` out: it is, or lies in, a path its `excluded` list names. */
export function leftOutBy(meta: { excluded: readonly { path: RelPath }[] }, rel: RelPath): boolean {
  return meta.excluded.some((e) => isWithin(rel, e.path.replace(/\/$/, "")));
}

/** Names the snapshots a prefix could mean, so the user can pick the digits that tell them apart. */
export function ambiguityMessage(given: string, matches: { id: string; meta: SnapshotMeta }[]): string {
  const shown = matches.slice(0, 5).map(({ id, meta }) => {
    const when = isoFromMicros(meta.t).replace("T", " ").slice(0, 19);
    const message = meta.message ? ` "${meta.message.split("\n")[0].slice(0, 40)}"` : "";
    return `${id.slice(0, 12)} ${meta.kind} ${when}${message}`;
  });
  const more = matches.length > shown.length ? `, and ${matches.length - shown.length} more` : "";
  return `snapshot id ${given} is ambiguous: ${matches.length} snapshots begin with it (${shown.join("; ")}${more}); give more of its digits`;
}

/** A snapshot id as given (7 to 40 hex digits, any case), lowercased; anything else is `bad-id`. */
export function checkedSnapshotId(given: unknown): string {
  const wanted = typeof given === "string" ? given.trim().toLowerCase() : "";
  if (!/^[0-9a-f]{7,40}$/.test(wanted)) {
    const shown = given === "" ? "an empty one" : String(given);
    throw new GhostcommitError("bad-id", `not a snapshot id: ${shown} (7 to 40 hex digits)`, {
      id: String(given),
    });
  }
  return wanted;
}
