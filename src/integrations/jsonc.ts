/**
 * A JSON value in a settings file with where its text is, so that install and uninstall can edit
 * only the entries they own and leave every other byte (numbers beyond double precision, escapes,
 * duplicate keys, comments, layout) as the user wrote it.
 */
export interface JsonNode {
  /** Offsets of the value's first character and just past its last. */
  start: number;
  end: number;
  /** As JSON.parse gives it (the last of duplicate keys wins, as agents read them). */
  value: unknown;
  /** Properties of an object, elements of an array; undefined for other values. */
  members?: JsonMember[];
}

export interface JsonMember {
  /** The property name; undefined for an array element. */
  key?: string;
  /** From the key (or the element) to the end of the value. */
  start: number;
  end: number;
  node: JsonNode;
  /** The offset of the comma after this member, when there is one. */
  comma?: number;
}

/**
 * Parses JSON with comments (`//`, `/* *\/`) and trailing commas, as Gemini CLI reads its
 * settings.json (and editors write such files). Throws a SyntaxError on anything else.
 */
export function parseJsonc(text: string): unknown {
  return parseJsoncTree(text).value;
}

/** As `parseJsonc`, with positions. */
export function parseJsoncTree(text: string): JsonNode {
  const reader = { text, at: 0 };
  const node = readValue(reader);
  skipTrivia(reader);
  if (reader.at < text.length) fail(reader, "unexpected text after the value");
  return node;
}

interface Reader {
  text: string;
  at: number;
}

function fail(reader: Reader, why: string): never {
  throw new SyntaxError(`${why} at offset ${reader.at}`);
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;

function readValue(reader: Reader): JsonNode {
  skipTrivia(reader);
  const { text } = reader;
  const start = reader.at;
  const c = text[start];
  if (c === "{" || c === "[") return readContainer(reader, c === "{");
  if (c === '"') {
    readString(reader);
    return { start, end: reader.at, value: JSON.parse(text.slice(start, reader.at)) };
  }
  for (const pattern of [NUMBER, LITERAL]) {
    pattern.lastIndex = start;
    if (pattern.test(text)) {
      reader.at = pattern.lastIndex;
      return { start, end: reader.at, value: JSON.parse(text.slice(start, reader.at)) };
    }
  }
  return fail(reader, c === undefined ? "unexpected end" : `unexpected ${JSON.stringify(c)}`);
}

function readString(reader: Reader): string {
  const { text } = reader;
  const start = reader.at;
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  if (i >= text.length) fail(reader, "unterminated string");
  reader.at = i + 1;
  return JSON.parse(text.slice(start, reader.at)); // escapes and control characters as JSON has them
}

function readContainer(reader: Reader, isObject: boolean): JsonNode {
  const { text } = reader;
  const start = reader.at;
  const close = isObject ? "}" : "]";
  const members: JsonMember[] = [];
  reader.at++;
  for (;;) {
    skipTrivia(reader);
    if (text[reader.at] === close) break; // empty, or after a trailing comma
    const memberStart = reader.at;
    let key: string | undefined;
    if (isObject) {
      if (text[reader.at] !== '"') fail(reader, "expected a property name");
      key = readString(reader);
      skipTrivia(reader);
      if (text[reader.at] !== ":") fail(reader, "expected a colon");
      reader.at++;
    }
    const node = readValue(reader);
    const member: JsonMember = { ...(isObject ? { key } : {}), start: memberStart, end: node.end, node };
    members.push(member);
    skipTrivia(reader);
    if (text[reader.at] === ",") {
      member.comma = reader.at++;
      continue;
    }
    if (text[reader.at] !== close) fail(reader, `expected a comma or ${close}`);
    break;
  }
  reader.at++;
  return { start, end: reader.at, value: containerValue(members, isObject), members };
}

function containerValue(members: JsonMember[], isObject: boolean): unknown {
  if (!isObject) return members.map((m) => m.node.value);
  const value: Record<string, unknown> = {};
  // Defined, not assigned: a "__proto__" key is a plain property, as JSON.parse makes it.
  for (const m of members)
    Object.defineProperty(value, m.key as string, {
      value: m.node.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return value;
}

/** Skips JSON whitespace (only these four: a byte order mark is not) and comments. */
function skipTrivia(reader: Reader): void {
  const { text } = reader;
  while (reader.at < text.length) {
    const c = text[reader.at];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") reader.at++;
    else if (c === "/" && text[reader.at + 1] === "/") {
      const end = text.indexOf("\n", reader.at);
      reader.at = end === -1 ? text.length : end;
    } else if (c === "/" && text[reader.at + 1] === "*") {
      const end = text.indexOf("*/", reader.at + 2);
      if (end === -1) fail(reader, "unterminated comment");
      reader.at = end + 2;
    } else break;
  }
}
