import type { CallToolResult } from "@modelcontextprotocol/server";
import { formatCount } from "../util/format.js";

/**
 * A tool's answer goes whole into the model's context: a diff of 40,000 files was 4.4 MB of text.
 * Claude Code refuses an answer over 25,000 tokens and puts one over 50,000 characters in a file
 * instead (an error's text is cut at about 11,000), so answers are kept under those sizes by
 * cutting their longest lists, and say what was left out and where the rest is.
 */
export const ANSWER_CHARS = 40_000;
export const ERROR_CHARS = 10_000;
/** Left in a cut document for its `truncated` field. */
const TRUNCATED_ROOM = 1_000;

/** One list that was cut: its place in the document (`items[].changed` for a list in each item). */
export interface CutList {
  list: string;
  shown: number;
  total: number;
}

/** What a cut answer says of itself, in its structured content (and its text, for an object). */
export interface Truncated {
  leftOut: number;
  lists: CutList[];
  rest: string;
}

/** The text an answer's document becomes (the CLI's `--json` form). */
export const documentText = (doc: unknown): string => JSON.stringify(doc, null, 2);

/**
 * `doc` with every list longer than some length cut to that length, the longest length at which
 * its text fits `budget` characters (short lists stay whole); `newest` names the lists whose last
 * entries are kept (oldest first, as a session's turns). Null when it fits as it is.
 */
export function fitted(
  doc: unknown,
  budget: number,
  newest: readonly string[] = [],
): { doc: unknown; cuts: CutList[] } | null {
  if (documentText(doc).length <= budget) return null;
  const room = budget - TRUNCATED_ROOM;
  // Every entry takes at least a character: no list longer than the budget can fit.
  let [low, high] = [0, Math.min(longestList(doc), room)];
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (documentText(cut(doc, mid, newest, "", new Map())).length <= room) low = mid;
    else high = mid - 1;
  }
  const cuts = new Map<string, CutList>();
  return { doc: cut(doc, low, newest, "", cuts), cuts: [...cuts.values()] };
}

function longestList(value: unknown): number {
  if (Array.isArray(value))
    return value.reduce((most: number, item) => Math.max(most, longestList(item)), value.length);
  if (value !== null && typeof value === "object") {
    return Object.values(value).reduce((most: number, field) => Math.max(most, longestList(field)), 0);
  }
  return 0;
}

/** `value` with each list longer than `length` cut to it, counting what was cut by its place. */
function cut(
  value: unknown,
  length: number,
  newest: readonly string[],
  at: string,
  cuts: Map<string, CutList>,
): unknown {
  if (Array.isArray(value)) {
    let shown = value;
    if (value.length > length) {
      shown = newest.includes(at) ? value.slice(value.length - length) : value.slice(0, length);
      const seen = cuts.get(at) ?? { list: at, shown: 0, total: 0 };
      cuts.set(at, { list: at, shown: seen.shown + length, total: seen.total + value.length });
    }
    return shown.map((item) => cut(item, length, newest, `${at}[]`, cuts));
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      out[key] = cut(field, length, newest, at ? `${at}.${key}` : key, cuts);
    }
    return out;
  }
  return value;
}

/** What the cut left out, and where the rest is. */
export function truncation(cuts: CutList[], rest: string): Truncated {
  const leftOut = cuts.reduce((sum, c) => sum + c.total - c.shown, 0);
  return { leftOut, lists: cuts, rest };
}

/** The note that follows a cut answer's document, for the model. */
export function truncationNote(truncated: Truncated, budget: number): string {
  const lists = truncated.lists.map(
    (c) => `\`${c.list}\` shows ${formatCount(c.shown)} of ${formatCount(c.total)} entries`,
  );
  return (
    `ghostcommit: this answer was cut to fit in about ${formatCount(budget)} characters:` +
    ` ${lists.join("; ")} (${formatCount(truncated.leftOut)} left out). For the rest: ${truncated.rest}.`
  );
}

/** How a tool's answer is given beyond its document. */
export interface AnswerOptions {
  isError?: boolean;
  /** Fields the structured content of a list adds beside its `items` (log's `session`). */
  beside?: Record<string, unknown>;
  /** Where the rest of a cut answer is: a narrower call, or the command line. */
  rest?: string;
  /** Lists whose newest entries come last, which a cut keeps (`items` of a session's turns). */
  newest?: string[];
}

const ANY_REST =
  "pass `paths` to narrow the call, or run the matching `ghostcommit` command with `--json` in a terminal";

/**
 * A tool result: the CLI's `--json` document as text, and as structured content (lists as
 * `{items}`), its lists cut to fit the model's context. A cut answer's structured content (and an
 * object's text) has `truncated`, and a second text item says what was left out, for the model.
 */
export function result(json: unknown, options: AnswerOptions = {}): CallToolResult {
  const list = Array.isArray(json);
  // Cut in the structured form, so the lists are named as the structured content names them.
  const whole = list ? { items: json } : json;
  const budget = options.isError ? ERROR_CHARS : ANSWER_CHARS;
  const fit = fitted(whole, budget, options.newest);
  const truncated = fit ? truncation(fit.cuts, options.rest ?? ANY_REST) : undefined;
  const doc = fit ? (fit.doc as Record<string, unknown>) : (whole as Record<string, unknown>);
  const text = list ? doc.items : truncated ? { ...doc, truncated } : doc;
  const out: CallToolResult = {
    content: [{ type: "text", text: documentText(text) }],
    structuredContent: list
      ? { ...options.beside, items: doc.items, ...(truncated ? { truncated } : {}) }
      : (text as Record<string, unknown>),
  };
  if (truncated) out.content.push({ type: "text", text: truncationNote(truncated, budget) });
  if (options.isError) out.isError = true;
  return out;
}
