// Builds the page with text nodes only: a path or prompt holding markup stays text.
export const token = new URLSearchParams(location.search).get("token") ?? "";

/** An element with attributes and children; strings become text nodes, never HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  el.append(...present(children));
  return el;
}

/** Replaces `el`'s children as h() builds them: the DOM itself would write a null in as the text "null". */
export function fill(el, ...children) {
  el.replaceChildren(...present(children));
  return el;
}

/** Nested lists flattened, and what is absent (null, undefined, false) left out. */
const present = (children) => children.flat(Number.POSITIVE_INFINITY).filter((c) => c !== null && c !== undefined && c !== false);

/**
 * Calls the server's API with the token in its header; resolves to {status, body}, never rejects:
 * a server that is gone (ghostcommit ui stopped) is status 0 with a message saying so.
 */
export async function api(path, { method = "GET", body, etag } = {}) {
  const changing = isAction(method, body);
  if (changing) changesInFlight++;
  try {
    return await request(path, method, body, etag);
  } finally {
    if (changing) changesInFlight--;
  }
}

/** A rewind or redo that changes files, not a read or a dry run. */
const isAction = (method, body) => method !== "GET" && body?.dryRun !== true;

let changesInFlight = 0;

/**
 * A rewind or redo is on its way: a timeline drawn meanwhile could redraw the pane between the
 * change and its answer, which would then show its outcome in a pane no longer on the page.
 */
export const changingFiles = () => changesInFlight > 0;

async function request(path, method, body, etag) {
  const headers = { "X-Ghostcommit-Token": token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (etag) headers["If-None-Match"] = etag;
  let res;
  let text;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 304) return { status: 304, body: null, etag };
    text = await res.text();
  } catch {
    return { status: 0, body: { error: { code: "unreachable", message: unreachable(path, method, body) } }, etag: null };
  }
  // The server answers again: what the page shows next comes from it, not from a guess.
  if (res.ok) unanswered = null;
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { error: { code: "internal", message: text } };
  }
  // The page was served with the token it sends: refused now, it is another server on that port
  // (one restarted with --port), with a new token the page cannot know.
  if (res.status === 403 && parsed?.error?.code === "bad-token") parsed.error.message = restarted();
  return { status: res.status, body: parsed, etag: res.headers.get("ETag") };
}

const restarted = () =>
  `the ghostcommit ui server was restarted: open the new URL it printed (this page's token is no longer valid; ${whatChanged()})`;

/**
 * The last action sent ("rewind", "redo") whose answer never came, or null: while there is one,
 * no message of the page, the status bar's polling included, may say that nothing was changed.
 */
let unanswered = null;

/** Reads change nothing; an action whose answer never came may or may not have happened. */
function unreachable(path, method, body) {
  if (isAction(method, body)) unanswered = path.split("/").pop();
  return `the ghostcommit ui server is not reachable (stopped?): ${whatChanged()}`;
}

const whatChanged = () =>
  unanswered ? `whether the ${unanswered} happened is unknown; ghostcommit log shows it` : "nothing was changed by this page";

/** "3 min ago" */
export function age(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

export function counts(added, removed) {
  return [h("span", { class: "plus" }, `+${added}`), " ", h("span", { class: "minus" }, `−${removed}`)];
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "turn 8", "turns 3, 4": the page's every label of turns, as the command line says them. */
export const turnsNamed = (turns) => `${turns.length === 1 ? "turn" : "turns"} ${turns.join(", ")}`;

export function setStatus(text) {
  const el = document.getElementById("status");
  el.textContent = text;
  clearTimeout(setStatus.timer);
  if (text) setStatus.timer = setTimeout(() => (el.textContent = ""), 6000);
}

const C_ESCAPES = { "\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\", "\x07": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v" };

/**
 * A path as git and the command line show it: quoted, with escapes, when it holds a control
 * character, a quote or a backslash, so `new\nline.txt` never reads as "new line.txt" (HTML folds
 * a line break into a space) and no two names read alike.
 */
export function shownPath(path) {
  if (!/[\x00-\x1f\x7f"\\]/.test(path)) return path;
  const escaped = path.replace(/[\x00-\x1f\x7f"\\]/g, (c) => C_ESCAPES[c] ?? `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
  return `"${escaped}"`;
}
