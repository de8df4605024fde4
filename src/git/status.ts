import { type RelPath, relFromBytes } from "../paths.js";
import { splitNul } from "./exec.js";

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

/** Parses porcelain v2 output with -z. Pure: tested on literal records. */
export function parseStatusV2(output: Buffer): StatusEntry[] {
  const records = splitNul(output);
  const entries: StatusEntry[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record.length === 0) continue;
    const tag = String.fromCharCode(record[0]);
    if (tag === "1" || tag === "2") {
      // Fixed fields are ASCII; the path is everything after the last fixed field.
      const fieldCount = tag === "1" ? 8 : 9;
      const { fields, rest } = splitFields(record, fieldCount);
      entries.push({
        kind: "changed",
        x: fields[1][0],
        y: fields[1][1],
        indexMode: fields[4],
        worktreeMode: fields[5],
        headOid: fields[6],
        indexOid: fields[7],
        path: relFromBytes(rest),
      });
      if (tag === "2") i++; // the original path of a rename follows as its own record
    } else if (tag === "u") {
      const { fields, rest } = splitFields(record, 10);
      entries.push({ kind: "unmerged", worktreeMode: fields[6], path: relFromBytes(rest) });
    } else if (tag === "?") {
      entries.push({ kind: "untracked", path: relFromBytes(record.subarray(2)) });
    } else if (tag === "!") {
      entries.push({ kind: "ignored", path: relFromBytes(record.subarray(2)) });
    }
  }
  return entries;
}

function splitFields(record: Buffer, count: number): { fields: string[]; rest: Buffer } {
  const fields: string[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    const space = record.indexOf(0x20, at);
    fields.push(record.toString("latin1", at, space));
    at = space + 1;
  }
  return { fields, rest: record.subarray(at) };
}
