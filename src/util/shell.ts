import { constants, promises as fs } from "node:fs";
import path from "node:path";

/** Quotes a word for /bin/sh: inside single quotes nothing is special but the quote itself. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A word as a person would type it: quoted only when /bin/sh would otherwise split or expand it.
 * One holding a control character is written `$'…'` with escapes (bash, zsh, ksh), so a hint
 * printed on a terminal neither sends it raw nor names another word.
 */
export function shellWord(word: string): string {
  if (/^[\w./@%+=:,-]+$/.test(word)) return word;
  if (!/[\x00-\x1f\x7f-\x9f]/.test(word)) return shellQuote(word);
  // Octal escapes of the character's UTF-8 bytes: what the shell puts back is the word's bytes.
  const octal = (c: string) => [...Buffer.from(c, "utf8")].map((n) => `\\${n.toString(8).padStart(3, "0")}`);
  const escaped = word.replace(/[\x00-\x1f\x7f-\x9f'\\]/g, (c) =>
    c === "'" || c === "\\" ? `\\${c}` : octal(c).join(""),
  );
  return `$'${escaped}'`;
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
