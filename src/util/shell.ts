import { constants, promises as fs } from "node:fs";
import path from "node:path";

/** Quotes a word for /bin/sh: inside single quotes nothing is special but the quote itself. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A word as a person would type it: quoted only when /bin/sh would otherwise split or expand it. */
export function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : shellQuote(word);
}

/** The first executable file named `name` in `$PATH`'s directories, or null. */
export async function findOnPath(name: string, searchPath = process.env.PATH ?? ""): Promise<string | null> {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue; // a relative entry would depend on the current directory
    const candidate = path.join(dir, name);
    const ok = await fs.access(candidate, constants.X_OK).then(
      () => fs.stat(candidate).then((s) => s.isFile()),
      () => false,
    );
    if (ok) return candidate;
  }
  return null;
}
