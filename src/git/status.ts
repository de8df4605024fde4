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
 * Parses porcelain v2 output with -z. Pure: tested on literal records. The whole output becomes
 * one binary string first (a RelPath is one char per byte): one conversion instead of one per
 * record, which matters when thousands of untracked files are listed.
 */
export function parseStatusV2(output: Buffer): StatusEntry[] {
  const records = output.toString("latin1").split("\0");
  const entries: StatusEntry[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record.length === 0) continue;
    const tag = record[0];
    if (tag === "1" || tag === "2") {
      // Fixed fields are ASCII; the path is everything after the last fixed field.
      const { fields, rest } = splitFields(record, tag === "1" ? 8 : 9);
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
      if (tag === "2") i++; // the original path of a rename follows as its own record
    } else if (tag === "u") {
      const { fields, rest } = splitFields(record, 10);
      entries.push({ kind: "unmerged", worktreeMode: fields[6], path: rest });
    } else if (tag === "?") {
      entries.push({ kind: "untracked", path: record.slice(2) });
    } else if (tag === "!") {
      entries.push({ kind: "ignored", path: record.slice(2) });
    }
  }
  return entries;
}

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
