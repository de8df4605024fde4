/** 5000 → "5,000" (toLocaleString would load ICU data: ~15 ms of start-up). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/**
 * What `new Date(ms).toISOString()` gives, put together from its UTC parts: a process's first
 * toISOString costs 1–2 ms (V8 sets up its date formatting), and every command that answers
 * with a snapshot or writes a journal makes one. Years outside 0–9999 go to toISOString.
 */
export function isoFromMillis(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
  const day = `${String(year).padStart(4, "0")}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`;
  const time = `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
  return `${day}T${time}.${String(date.getUTCMilliseconds()).padStart(3, "0")}Z`;
}

/** git's C-style escapes of the characters that need no octal. */
export const C_ESCAPES: Record<string, string> = {
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
  '"': '\\"',
  "\\": "\\\\",
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\v": "\\v",
};

/**
 * A path for people, quoted as git quotes it when it holds a control character, a quote or a
 * backslash (`"new\nline"`), so one name never reads as two lines or two names and never sends a
 * terminal escape. Machine-readable output keeps names as they are.
 */
export function quotedPath(path: string): string {
  if (!/[\x00-\x1f\x7f"\\]/.test(path)) return path;
  const escaped = path.replace(
    /[\x00-\x1f\x7f"\\]/g,
    (c) => C_ESCAPES[c] ?? `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`,
  );
  return `"${escaped}"`;
}

/**
 * Free text for human output (a prompt, a message, a session or turn id, a name a remote gave):
 * control characters, which could move the cursor, retitle or clear the terminal, or make one id
 * read as two lines, are shown as escapes (`\e`, `\n`, `\033`), never sent raw.
 */
export function humanText(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) =>
    c === "\x1b" ? "\\e" : (C_ESCAPES[c] ?? `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`),
  );
}

/** A one-line prompt preview (whitespace collapsed, at most `max` characters). */
export function promptPreview(prompt: string, max = 200): string {
  const flat = prompt.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  // Never between the two halves of an emoji (a lone surrogate is not text).
  const end = /[\ud800-\udbff]/.test(flat[max - 2] ?? "") ? max - 2 : max - 1;
  return `${flat.slice(0, end)}…`;
}

/** "turn 2", "turns 2, 3": turn ids after their noun in the right number ("none" for no turn). */
export function turnsNamed(turns: readonly string[]): string {
  if (turns.length === 0) return "none";
  return `${turns.length === 1 ? "turn" : "turns"} ${turns.map(humanText).join(", ")}`;
}
