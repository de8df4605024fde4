// Keyboard use of the timeline: the list is one Tab stop (a roving tabindex: the arrow keys and
// j/k move in it), and focus stays on its turn when a poll draws the list afresh.

/** The key of the item holding the list's one Tab stop (the last one focused). */
let tabStop = null;

const itemOf = (el) => el?.closest?.(".item") ?? null;

/** Where focus is in the list, to find again once it is drawn afresh (null: focus is elsewhere). */
export function focusInList(listEl) {
  const el = document.activeElement;
  if (!el || !listEl.contains(el)) return null;
  const item = itemOf(el);
  if (item) return { key: item.dataset.key };
  return { session: el.closest("[data-session]")?.dataset.session ?? null };
}

/** Gives the Tab stop to the item keyed `key` (or the selected one, or the first) and the others -1. */
export function setTabStop(listEl, key, selected) {
  const items = [...listEl.querySelectorAll(".item")];
  const stop = items.find((i) => i.dataset.key === key) ?? items.find((i) => i.dataset.key === selected) ?? items[0];
  for (const item of items) item.tabIndex = item === stop ? 0 : -1;
  tabStop = stop?.dataset.key ?? null;
  return stop ?? null;
}

/**
 * After the list was drawn afresh: the Tab stop where it was, and focus, if it was in the list,
 * back on the same item (or the same session's Redo button); a turn gone leaves it on the Tab stop.
 */
export function restoreListFocus(listEl, focused, selected) {
  const stop = setTabStop(listEl, tabStop, selected);
  if (!focused) return;
  const items = [...listEl.querySelectorAll(".item")];
  const same = focused.key
    ? items.find((i) => i.dataset.key === focused.key)
    : [...listEl.querySelectorAll("[data-session]")].find((s) => s.dataset.session === focused.session)?.querySelector("header button");
  (same ?? stop)?.focus();
}

/**
 * The page's keys: j/k and the arrow keys move through the list (from the item focused, else the
 * one selected), Enter on an item opens it, n/p move between the diff's files, Escape is the
 * Cancel of an open preview or refusal (`cancel()`: false when none is open).
 */
export function listenForKeys(listEl, { select, open, pickFile, file, selected, cancel }) {
  listEl.addEventListener("focusin", (event) => {
    const item = itemOf(event.target);
    if (item) setTabStop(listEl, item.dataset.key, selected());
  });
  // The list's keys act from the list, or with focus nowhere in particular: on a button of the
  // pane (Confirm rewind) they would select another turn and throw away what the pane shows.
  const onList = (el) => listEl.contains(el) || el === document.body || el === document.documentElement;
  document.addEventListener("keydown", (event) => {
    if (event.target.closest?.("select, input, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      if (cancel()) event.preventDefault();
      return;
    }
    const items = [...listEl.querySelectorAll(".item")];
    const from = itemOf(event.target)?.dataset.key ?? selected();
    const at = items.findIndex((el) => el.dataset.key === from);
    const move = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    if (move && items.length > 0 && onList(event.target)) {
      event.preventDefault();
      const next = items[at < 0 ? 0 : Math.max(0, Math.min(items.length - 1, at + move))];
      select(next.dataset.key);
    } else if (event.key === "n" || event.key === "p") {
      pickFile(file() + (event.key === "n" ? 1 : -1));
    } else if (event.key === "Enter" && event.target.classList?.contains("item")) {
      event.preventDefault();
      open(event.target.dataset.key);
    }
  });
}
