import { isUtf8 } from "node:buffer";
import { readFileSync } from "node:fs";
import { GhostcommitError } from "../errors.js";
import { quotedPath } from "../util/format.js";

/**
 * Node decodes the command line as UTF-8 and puts U+FFFD for each byte it cannot decode, so a
 * path argument naming a file whose name is not UTF-8 reaches ghostcommit as another name, its
 * bytes lost. Such an argument is refused instead of being taken for a path that does not exist.
 */

let notUtf8: string[] = [];

/**
 * Remembers which arguments of `argv` (as in process.argv) were not valid UTF-8. On Linux the
 * bytes given are in /proc/self/cmdline, so a name really spelled with U+FFFD still works;
 * elsewhere, or when that file does not match `argv`, a U+FFFD is taken for a byte lost.
 */
export function rememberRawArgs(argv: readonly string[]): void {
  const args = argv.slice(2);
  notUtf8 = args.filter((arg) => arg.includes("\uFFFD"));
  if (notUtf8.length === 0 || argv !== process.argv) return;
  let raw: Buffer[];
  try {
    const cmdline = readFileSync("/proc/self/cmdline");
    raw = splitArgs(cmdline).slice(-args.length);
  } catch {
    return; // no /proc
  }
  if (raw.length === args.length && raw.every((bytes, i) => bytes.toString("utf8") === args[i])) {
    notUtf8 = args.filter((_, i) => !isUtf8(raw[i]));
  }
}

/** The arguments in /proc/self/cmdline's form: each followed by a NUL. */
function splitArgs(cmdline: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let start = 0; start < cmdline.length; ) {
    const end = cmdline.indexOf(0, start);
    const stop = end === -1 ? cmdline.length : end;
    out.push(cmdline.subarray(start, stop));
    start = stop + 1;
  }
  return out;
}

/**
 * Refuses a path given on the command line that was not valid UTF-8: as a word of its own, or
 * the value of an option spelled `--opt=value` or `-Cvalue`.
 */
export function refuseNotUtf8(paths: readonly string[], hint: string): void {
  for (const given of paths) {
    if (!given.includes("\uFFFD") || !notUtf8.some((arg) => arg.endsWith(given))) continue;
    throw new GhostcommitError(
      "usage",
      `path argument is not valid UTF-8, so it cannot be passed on the command line: ${quotedPath(given)} (${hint})`,
      { path: given },
    );
  }
}
