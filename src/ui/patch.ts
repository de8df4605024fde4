import type { DiffEntry } from "../index.js";

/** One line of a hunk: kind (" " context, "+" added, "-" removed, "\\" note), old and new line numbers, text. */
export type PatchLine = [
  kind: " " | "+" | "-" | "\\",
  oldNo: number | null,
  newNo: number | null,
  text: string,
];

export interface PatchHunk {
  header: string;
  lines: PatchLine[];
}

/** One file of a diff as the page shows it. Binary and large files carry no hunks. */
export interface FilePatch {
  path: string;
  status: DiffEntry["status"];
  added: number;
  removed: number;
  binary: boolean;
  /** Too many lines to show in a page: named with its counts, not dumped. */
  large: boolean;
  hunks: PatchHunk[];
  /** As `diff --json` gives them: a mode-only or type change has no hunks, only these. */
  oldMode?: string;
  newMode?: string;
}

/** Lines of one file's patch above which the page names it instead of showing it. */
export const LARGE_FILE_LINES = 2000;

/**
 * Splits `git diff-tree -p` output into its per-file sections. Content lines of a hunk always
 * start with " ", "+", "-" or "\\", so a line starting with "diff --git " begins a section.
 */
function sections(patch: string): string[][] {
  const result: string[][] = [];
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) result.push([]);
    result[result.length - 1]?.push(line);
  }
  return result;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

function parseSection(lines: string[], into: FilePatch): void {
  let hunk: PatchHunk | null = null;
  let oldNo = 0;
  let newNo = 0;
  for (const line of lines) {
    const header = HUNK_HEADER.exec(line);
    if (header) {
      hunk = { header: line, lines: [] };
      into.hunks.push(hunk);
      oldNo = Number(header[1]);
      newNo = Number(header[2]);
      continue;
    }
    if (!hunk) {
      if (line.startsWith("Binary files ") || line === "GIT binary patch") into.binary = true;
      continue;
    }
    const kind = line[0];
    const text = line.slice(1);
    if (kind === "+") {
      into.added++;
      hunk.lines.push(["+", null, newNo++, text]);
    } else if (kind === "-") {
      into.removed++;
      hunk.lines.push(["-", oldNo++, null, text]);
    } else if (kind === " ") {
      hunk.lines.push([" ", oldNo++, newNo++, text]);
    } else if (kind === "\\") {
      hunk.lines.push(["\\", null, null, text.trim()]);
    }
  }
}

/**
 * Pairs git's patch with the structured diff of the same two trees. Both come from
 * `diff-tree -r --no-renames` and so list paths in the same order; a type change is printed as
 * two sections (the old kind deleted, the new one added). Pairing by order avoids parsing git's
 * quoted path names.
 */
export function parsePatch(entries: DiffEntry[], patch: string): FilePatch[] {
  const parts = sections(patch);
  let next = 0;
  return entries.map((entry) => {
    const file: FilePatch = {
      path: entry.path,
      status: entry.status,
      added: 0,
      removed: 0,
      binary: false,
      large: false,
      hunks: [],
      ...(entry.oldMode ? { oldMode: entry.oldMode } : {}),
      ...(entry.newMode ? { newMode: entry.newMode } : {}),
    };
    const count = entry.status === "type-changed" ? 2 : 1;
    for (const part of parts.slice(next, next + count)) parseSection(part, file);
    next += count;
    const lineCount = file.hunks.reduce((n, h) => n + h.lines.length, 0);
    if (lineCount > LARGE_FILE_LINES) {
      file.large = true;
      file.hunks = [];
    }
    return file;
  });
}

/** A turn's summary: added and removed lines; `binary`, set only when some, counts the binary files. */
export interface LineCounts {
  added: number;
  removed: number;
  binary?: number;
}

/** Total added and removed lines of a patch, for a turn's summary, and its binary files (no lines). */
export function countLines(patch: string): LineCounts {
  let added = 0;
  let removed = 0;
  let binary = 0;
  for (const part of sections(patch)) {
    let inHunk = false;
    for (const line of part) {
      if (line.startsWith("@@ ")) inHunk = true;
      else if (inHunk && line[0] === "+") added++;
      else if (inHunk && line[0] === "-") removed++;
      else if (!inHunk && (line.startsWith("Binary files ") || line === "GIT binary patch")) binary++;
    }
  }
  return binary > 0 ? { added, removed, binary } : { added, removed };
}
