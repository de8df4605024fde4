import type { JsonMember, JsonNode } from "./jsonc.js";

/**
 * Text edits of a JSON(C) settings file that add or remove one member of an object or array and
 * touch no other byte. A member added at the end and then removed gives the text back exactly:
 * the addition is `,<newline><indent>member` after the last member, the removal takes out the
 * text from the end of the member before it.
 */

/** How the file is laid out, for the text it gets. */
export interface Layout {
  eol: "\n" | "\r\n";
  /** One level of indentation, as the file has it (two spaces when it has none). */
  unit: string;
  /** Settings kept on one line (as a tool or an `echo` wrote them): added text stays on it. */
  oneLine: boolean;
  /** On that line, a space after commas and colons. */
  spaced: boolean;
}

export function layoutOf(text: string, root: JsonNode): Layout {
  const oneLine = (root.members?.length ?? 0) > 0 && !text.trim().includes("\n");
  return {
    eol: text.includes("\r\n") ? "\r\n" : "\n",
    unit: /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ",
    oneLine,
    spaced: oneLine && /[,:] /.test(text),
  };
}

/** The whitespace that starts the line `offset` is on. */
function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? "";
}

/** A member's text: on one line in a container on one line, else laid out as the file is. */
function render(
  key: string | undefined,
  value: unknown,
  indent: string,
  layout: Layout,
  inLine: boolean,
): string {
  const spaced = !layout.oneLine || layout.spaced;
  let json = JSON.stringify(value);
  if (spaced && (inLine || layout.oneLine))
    json = JSON.stringify(value, null, 1)
      .replace(/\n */g, " ")
      .replace(/([[{]) | ([\]}])/g, "$1$2");
  else if (spaced) json = JSON.stringify(value, null, layout.unit).replace(/\n/g, layout.eol + indent);
  if (key === undefined) return json;
  return `${JSON.stringify(key)}:${spaced ? " " : ""}${json}`;
}

function splice(text: string, from: number, to: number, insert = ""): string {
  return text.slice(0, from) + insert + text.slice(to);
}

/** Adds `key: value` (or an element, key undefined) as the container's last member, or its first. */
export function addMember(
  text: string,
  container: JsonNode,
  key: string | undefined,
  value: unknown,
  layout: Layout,
  first = false,
): string {
  const members = container.members ?? [];
  const open = container.start + 1;
  const close = container.end - 1;
  if (members.length === 0) {
    const closeIndent = indentAt(text, container.start);
    const member = render(key, value, closeIndent + layout.unit, layout, false);
    // Blanks on the opening line stay before the member: removing it gives them back (`[ ]`).
    if (layout.oneLine) return splice(text, close, close, member);
    const lines = `${layout.eol}${closeIndent}${layout.unit}${member}`;
    const inner = text.slice(open, close);
    // Only blanks inside: laid out anew (removing the member gives `{}` or `[]`, or the blanks
    // of a one-line `[ ]`). A comment inside stays where it is, the member after it.
    const kept = inner.includes("\n") ? "" : inner;
    if (inner.trim() === "") return splice(text, open, close, `${kept}${lines}${layout.eol}${closeIndent}`);
    const afterComment = open + inner.trimEnd().length;
    return splice(text, afterComment, afterComment, lines);
  }
  const inLine = !text.slice(container.start, container.end).includes("\n");
  const gap = layout.oneLine ? (layout.spaced ? " " : "") : inLine ? " " : undefined;
  if (first) {
    const next = members[0];
    const indent = indentAt(text, next.start);
    const member = render(key, value, indent, layout, inLine);
    return splice(text, next.start, next.start, `${member},${gap ?? layout.eol + indent}`);
  }
  const last = members[members.length - 1];
  const indent = indentAt(text, last.start);
  const member = render(key, value, indent, layout, inLine);
  return splice(text, last.end, last.end, `,${gap ?? layout.eol + indent}${member}`);
}

const COMMA_AND_BLANKS = /^\s*,?\s*$/;

/** Removes `[start, end)`, with its line when nothing else is on that line (a comment stays). */
function removeSpan(text: string, start: number, end: number): string {
  let from = start;
  while (from > 0 && (text[from - 1] === " " || text[from - 1] === "\t")) from--;
  let to = end;
  while (text[to] === " " || text[to] === "\t") to++;
  const eol = text.startsWith("\r\n", to) ? 2 : text[to] === "\n" ? 1 : 0;
  if ((from === 0 || text[from - 1] === "\n") && eol > 0) return splice(text, from, to + eol);
  return splice(text, start, end);
}

/** Removes the container's member `index`, its comma and the blanks only it needed. */
export function removeMember(text: string, container: JsonNode, index: number): string {
  const members = container.members ?? [];
  const member: JsonMember = members[index];
  const previous = members[index - 1];
  const next = members[index + 1];
  if (previous) {
    // The text install adds after the previous member: its comma, the line break and the member.
    if (COMMA_AND_BLANKS.test(text.slice(previous.end, member.start)))
      return splice(text, previous.end, member.end);
    // Comments before the member stay. A member with a comma goes with it; the last one takes the
    // comma that led to it.
    if (member.comma !== undefined) return removeSpan(text, member.start, member.comma + 1);
    const withoutMember = removeSpan(text, member.start, member.end);
    return splice(withoutMember, previous.comma as number, (previous.comma as number) + 1);
  }
  if (next) {
    if (COMMA_AND_BLANKS.test(text.slice(member.end, next.start)))
      return splice(text, member.start, next.start);
    return removeSpan(text, member.start, (member.comma as number) + 1);
  }
  const open = container.start + 1;
  const close = container.end - 1;
  const before = text.slice(open, member.start);
  const after = text.slice(member.end, close);
  if (before.trim() === "" && COMMA_AND_BLANKS.test(after))
    return splice(text, open, close, before.split("\n")[0].replace(/\r$/, ""));
  return removeSpan(text, member.start, member.comma === undefined ? member.end : member.comma + 1);
}

/** The index of the last member named `key` (the one agents read when a key is repeated); -1 if none. */
export function lastIndexOfKey(container: JsonNode, key: string): number {
  const members = container.members ?? [];
  for (let i = members.length - 1; i >= 0; i--) if (members[i].key === key) return i;
  return -1;
}

/** The node at `keys`, object keys from `root` down (the last of a repeated key). */
export function nodeAt(root: JsonNode, keys: string[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const key of keys) node = node?.members?.[lastIndexOfKey(node, key)]?.node;
  return node;
}
