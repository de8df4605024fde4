import type { RelPath } from "../paths.js";

/** One record of `git status --porcelain=2 -z`. */
export type StatusEntry =
  | {
      kind: "changed";
      /** Staged (HEAD vs index) and unstaged (index vs work tree) states, '.' for unchanged. */
      x: string;
      y: string;
      indexMode: string;
      worktreeMode: string;
      headOid: string;
      indexOid: string;
      path: RelPath;
    }
  | { kind: "unmerged"; worktreeMode: string; path: RelPath }
  | { kind: "untracked"; path: RelPath }
  | { kind: "ignored"; path: RelPath };

/**
 * Tells, for an untracked path of status output (`text` from `start` to `end`), whether the caller
 * takes it aside itself rather than as an entry: thousands of untracked files in a dependency
 * directory are then counted without a string or an object each.
 */
export type UntrackedAside = (text: string, start: number, end: number) => boolean;

/**
 * Parses porcelain v2 output with -z. Pure: tested on literal records. The whole output becomes
 * one binary string first (a RelPath is one char per byte): one conversion instead of one per
 * record, which matters when thousands of untracked files are listed. Records are found in it
 * by position, so a path is sliced out only for an entry.
 */
export function parseStatusV2(output: Buffer, aside?: UntrackedAside): StatusEntry[] {
  const text = output.toString("latin1");
  const entries: StatusEntry[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf("\0", start);
    if (end === -1) end = text.length;
    const tag = text.charCodeAt(start);
    if (tag === UNTRACKED) {
      if (!aside?.(text, start + 2, end))
        entries.push({ kind: "untracked", path: text.slice(start + 2, end) });
    } else if (tag === IGNORED) {
      entries.push({ kind: "ignored", path: text.slice(start + 2, end) });
    } else if (tag === ORDINARY || tag === RENAMED) {
      // Fixed fields are ASCII; the path is everything after the last fixed field.
      const { fields, rest } = splitFields(text.slice(start, end), tag === ORDINARY ? 8 : 9);
      entries.push({
        kind: "changed",
        x: fields[1][0],
        y: fields[1][1],
        indexMode: fields[4],
        worktreeMode: fields[5],
        headOid: fields[6],
        indexOid: fields[7],
        path: rest,
      });
      if (tag === RENAMED) {
        // The original path of a rename follows as its own record.
        const next = text.indexOf("\0", end + 1);
        end = next === -1 ? text.length : next;
      }
    } else if (tag === UNMERGED) {
      const { fields, rest } = splitFields(text.slice(start, end), 10);
      entries.push({ kind: "unmerged", worktreeMode: fields[6], path: rest });
    }
    start = end + 1;
  }
  return entries;
}

const ORDINARY = 0x31; // "1"
const RENAMED = 0x32; // "2"
const UNMERGED = 0x75; // "u"
const UNTRACKED = 0x3f; // "?"
const IGNORED = 0x21; // "!"

function splitFields(record: string, count: number): { fields: string[]; rest: RelPath } {
  const fields: string[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    const space = record.indexOf(" ", at);
    fields.push(record.slice(at, space));
    at = space + 1;
  }
  return { fields, rest: record.slice(at) };
}

/**
 * The directories status could not read (its "could not open directory" warnings, in git's C
 * locale), repository-relative: what is in them is unknown, so a snapshot must say it left them
 * out rather than let a restore take their files for absent.
 */
export function unreadableDirs(stderr: string): RelPath[] {
  const dirs: RelPath[] = [];
  for (const match of stderr.matchAll(/^warning: could not open directory '(.*)\/': Permission denied$/gm)) {
    dirs.push(Buffer.from(match[1], "utf8").toString("latin1"));
  }
  return dirs;
}

/**
 * What status could not look at: the directories it could not list (`unreadableDirs`) and the
 * tracked files it could not even stat (its "<path>: Permission denied" lines, the files of such
 * a directory, which an untracked cache may spare listing), those below a listed directory left
 * to it. Their content is unknown: a snapshot holding HEAD's for them would tell a lie a restore acts on.
 */
export function unreadablePaths(stderr: string): RelPath[] {
  const dirs = unreadableDirs(stderr);
  const files: RelPath[] = [];
  for (const match of stderr.matchAll(/^(?!warning: |error: |fatal: |hint: )(.+): Permission denied$/gm)) {
    const file = Buffer.from(match[1], "utf8").toString("latin1");
    if (!dirs.some((dir) => file.startsWith(`${dir}/`)) && !files.includes(file)) files.push(file);
  }
  return [...dirs, ...files];
}

/**
 * How many directories' ignore files a status found changed from what git's untracked cache
 * records (its trace2 "gitignore-invalidation" count, with `GIT_TRACE2_PERF` on stderr); null
 * when it did not say (no cache used, a git without the count).
 */
export function ignoreFilesChanged(stderr: string): number | null {
  const counts = [...stderr.matchAll(/\bgitignore-invalidation:(\d+)$/gm)].map((m) => Number(m[1]));
  return counts.length > 0 ? counts.reduce((sum, count) => sum + count, 0) : null;
}
