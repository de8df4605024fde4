// The timeline page: sessions and their turns, plain snapshots, a diff pane, rewind and redo.
const query = new URL(import.meta.url).search;
// Loaded in parallel; each URL carries the token, as every request must.
const [{ h, fill, api, age, counts, plural, turnsNamed, setStatus, changingFiles, shownPath }, { renderDiff }, { showRewind, redo, cancelShown }, keys] = await Promise.all(
  ["dom", "diff", "actions", "keys"].map((name) => import(`./${name}.js${query}`)),
);

const state = { timeline: null, etag: null, selected: null, counts: new Map(), file: -1, diffSeq: 0 };
const timelineEl = document.getElementById("timeline");
const detailEl = document.getElementById("detail");
const viewEl = document.getElementById("view");
viewEl.value = localStorage.getItem("ghostcommit.view") ?? "unified";

const pairOf = (turn) => (turn.after ? `${turn.before}..${turn.after}` : null);

/** As in `log`: `gone` (its snapshots expired or were dropped), `ended` (its conversation ended with it open). */
const stateOf = (turn) => (turn.gone ? "gone" : turn.abandonedAt ? "ended" : turn.state);

function turnItem(session, turn) {
  const pair = turn.gone ? null : pairOf(turn);
  const known = pair && state.counts.get(pair);
  return h(
    "li",
    { class: `item turn ${stateOf(turn)}`, tabindex: -1, "data-key": `turn:${JSON.stringify([session.session, turn.turn])}` },
    h("div", { class: "line1" }, h("span", { class: "id" }, `#${turn.turn}`), h("span", { class: "prompt", title: turn.prompt }, turn.prompt || "(no prompt)")),
    h(
      "div",
      { class: "line2" },
      h("span", { "data-time": turn.startedAt }, age(turn.startedAt)),
      h("span", { class: `state state-${stateOf(turn)}` }, stateOf(turn)),
      h("span", {}, plural(turn.changed.length, "file")),
      h("span", { class: "counts", "data-pair": pair ?? "" }, known ? lineCounts(known) : ""),
    ),
    turn.rewoundPaths ? h("div", { class: "line3" }, rewoundOnly(turn.rewoundPaths)) : null,
    turn.uncertain ? h("div", { class: "line3 maybe" }, maybeNot(turn.uncertain)) : null,
  );
}

/** "+2 −1"; a turn whose changes are all binary files says "binary", not "+0 −0" (a no-op, it would seem). */
const lineCounts = (c) =>
  c.binary && c.added === 0 && c.removed === 0 ? [h("span", { class: "badge" }, "binary")] : counts(c.added, c.removed);

/** A done turn's paths a rewind of chosen paths put back, as `log` lists them. */
const rewoundOnly = (paths) => `rewound only: ${fewPaths(paths)}`;

/** A turn's changes no tool call of it can account for, as `log` lists them. */
const maybeNot = (paths) => `maybe not the agent's: ${fewPaths(paths)}`;

const fewPaths = (paths) => `${paths.slice(0, 5).map(shownPath).join(", ")}${paths.length > 5 ? ", …" : ""}`;

function snapshotItem(snapshot) {
  return h(
    "li",
    { class: "item snapshot", tabindex: -1, "data-key": `snap:${snapshot.id}` },
    h("div", { class: "line1" }, h("span", { class: "id" }, snapshot.id.slice(0, 8)), h("span", { class: "prompt" }, snapshot.message)),
    h("div", { class: "line2" }, h("span", { "data-time": snapshot.createdAt }, age(snapshot.createdAt)), h("span", { class: "state" }, snapshot.kind)),
  );
}

/** "Redo turn N", naming the turns it brings back on the button itself: the server redoes only those (see actions.js). */
function redoButton(session) {
  const turns = session.redoTurns ?? [];
  // A rewind of chosen paths left its turns done: the redo brings back those paths, not the turns.
  const paths = session.redoPaths;
  const title = `brings back ${paths ? `${paths.map(shownPath).join(", ")} of ` : ""}${turnsNamed(turns)}`;
  return h("button", { class: "redo", title, onclick: () => redo(session.session, turns, reload) }, `Redo ${turnsNamed(turns)}`);
}

/**
 * A rewound turn's way back: Redo only when the next redo brings this turn back; otherwise which
 * redo comes first (rewinds stack: the last one is redone first), or why none will.
 */
function redoOfTurn(session, turn) {
  const turns = session.redoable ? (session.redoTurns ?? []) : [];
  if (turns.includes(turn.turn)) return redoButton(session);
  if (turns.length > 0)
    return h("p", { class: "muted redo-first" }, `Redo brings back ${turnsNamed(turns)} first (the session's last rewind); this turn comes back with a later redo.`);
  return h("p", { class: "muted" }, "No redo brings this turn back: a later turn discarded the redo history.");
}

/** The timeline, and the open turn's pane with it (its state and buttons may have changed). */
async function reload() {
  if (!(await refresh()) && state.selected) await select(state.selected, false);
}

/** What the selected turn's pane shows that the timeline can change: its state, its end, the session's redo. */
function paneSignature() {
  const picked = findSelected();
  if (picked?.kind !== "turn") return "";
  const { session, turn } = picked;
  return JSON.stringify([turn.state, turn.gone, turn.after, turn.rewoundPaths, session.redoable, session.redoTurns, session.redoPaths]);
}

function renderTimeline() {
  const { sessions, snapshots, root } = state.timeline;
  document.getElementById("root").textContent = root;
  const parts = sessions.map((session) =>
    h(
      "section",
      { class: "session", "data-session": session.session },
      h(
        "header",
        {},
        h("h2", { title: session.session }, session.session),
        h("span", { class: "muted" }, `${plural(session.turns.length, "turn")} · ${age(session.updatedAt)}`),
        session.redoable ? redoButton(session) : null,
      ),
      h("ol", { class: "items" }, session.turns.map((turn) => turnItem(session, turn))),
    ),
  );
  if (snapshots.length > 0) {
    parts.push(h("section", { class: "snapshots" }, h("h2", {}, "Snapshots"), h("ol", { class: "items" }, snapshots.map(snapshotItem))));
  }
  if (parts.length === 0) parts.push(h("p", { class: "muted", style: null }, "No sessions or snapshots yet."));
  const focused = keys.focusInList(timelineEl);
  fill(timelineEl, parts);
  markSelected();
  keys.restoreListFocus(timelineEl, focused, state.selected);
  fetchCounts();
}

/** Line counts come after the first render: the list shows at once, numbers fill in. */
async function fetchCounts() {
  const missing = state.timeline.sessions.flatMap((s) => s.turns.filter((t) => !t.gone).map(pairOf)).filter((p) => p && !state.counts.has(p));
  for (let i = 0; i < missing.length; i += 100) {
    const { status, body } = await api(`/api/counts?pairs=${missing.slice(i, i + 100).join(",")}`);
    // Pairs that cannot be counted (a snapshot gone) are left out; a failed batch leaves its turns blank.
    if (status !== 200) continue;
    for (const [pair, c] of Object.entries(body)) {
      state.counts.set(pair, c);
      for (const el of timelineEl.querySelectorAll(`[data-pair="${pair}"]`)) fill(el, lineCounts(c));
    }
  }
}

function findSelected() {
  const key = state.selected;
  if (!key || !state.timeline) return null;
  const kind = key.slice(0, key.indexOf(":"));
  const rest = key.slice(kind.length + 1);
  if (kind === "snap") {
    const i = state.timeline.snapshots.findIndex((s) => s.id === rest);
    return i < 0 ? null : { kind, snapshot: state.timeline.snapshots[i], older: state.timeline.snapshots[i + 1] ?? null };
  }
  const [sessionId, turnId] = JSON.parse(rest);
  const session = state.timeline.sessions.find((s) => s.session === sessionId);
  const turn = session?.turns.find((t) => t.turn === turnId);
  return turn ? { kind, session, turn } : null;
}

function markSelected() {
  for (const el of timelineEl.querySelectorAll(".item")) el.classList.toggle("selected", el.dataset.key === state.selected);
}

/** Shows `key`'s pane; `kept` (a rewind's outcome) goes where its actions' panels go. */
async function select(key, focus = true, kept = null) {
  state.selected = key;
  state.file = -1;
  markSelected();
  const item = timelineEl.querySelector(`.item.selected`);
  if (focus && item) item.focus();
  const picked = findSelected();
  if (!picked) return;
  let head;
  let from;
  let to;
  if (picked.kind === "turn") {
    const { session, turn } = picked;
    from = turn.before;
    to = turn.after;
    head = [
      h("h2", {}, `Turn ${turn.turn} · ${stateOf(turn)}`),
      h("p", { class: "muted" }, `session ${session.session} · started ${age(turn.startedAt)}${turn.after ? "" : " · still open: diff against the files now"}`),
      turn.rewoundPaths ? h("p", { class: "muted rewound-only" }, rewoundOnly(turn.rewoundPaths)) : null,
      turn.uncertain
        ? h(
            "p",
            { class: "maybe-not" },
            `${maybeNot(turn.uncertain)} (no tool call of the turn can account for the change: made while it was interrupted, by a person, or by another session; rewinding the turn refuses them unless forced)`,
          )
        : null,
      h("div", { class: "full-prompt" }, turn.prompt || "(no prompt)"),
      h(
        "div",
        { class: "actions" },
        turn.gone
          ? h("p", { class: "muted" }, "Its snapshots expired or were dropped: it can no longer be rewound.")
          : turn.state === "rewound"
          ? redoOfTurn(session, turn)
          : h("button", { class: "rewind", onclick: () => showRewind(plan, session.session, turn.turn, refresh) }, "Rewind to before this turn"),
      ),
    ];
  } else {
    const { snapshot, older } = picked;
    from = older ? older.id : snapshot.id;
    to = older ? snapshot.id : null;
    head = [
      h("h2", {}, snapshot.message),
      h("p", { class: "muted" }, `${snapshot.kind} ${snapshot.id} · ${age(snapshot.createdAt)} · ${older ? "changes since the snapshot before it" : "the files now, against this snapshot"}`),
    ];
  }
  const plan = h("div", { class: "plan" }, kept);
  const diffEl = h("div", { class: "diff-pane" }, h("p", { class: "muted" }, "loading diff…"));
  fill(detailEl, head, plan, diffEl);
  const seq = ++state.diffSeq;
  const { status, body } = await api(`/api/diff?from=${from}${to ? `&to=${to}` : ""}`);
  if (seq !== state.diffSeq) return;
  if (status !== 200) fill(diffEl, h("p", { class: "panel conflict" }, body?.error?.message ?? "diff failed"));
  else fill(diffEl, renderDiff(body, viewEl.value, pickFile, picked.kind === "turn" ? picked.turn.uncertain : undefined));
}

/**
 * Moves focus into the pane `shown` (a select() under way) draws: its first button, else, once
 * the diff is in, its first file; unless focus went elsewhere meanwhile.
 */
async function focusPane(shown) {
  const first = () => detailEl.querySelector(".actions button, .files li");
  const was = document.activeElement;
  if (first()) return first().focus();
  await shown;
  if (document.activeElement === was || document.activeElement === document.body) first()?.focus();
}

function pickFile(i) {
  const files = detailEl.querySelectorAll("section.file");
  if (files.length === 0) return;
  state.file = Math.max(0, Math.min(files.length - 1, i));
  for (const el of detailEl.querySelectorAll("[data-file]")) el.classList.toggle("current", Number(el.dataset.file) === state.file);
  files[state.file].scrollIntoView({ block: "start" });
}

/**
 * The timeline afresh; when the selected turn's state, end or redo changed (a rewind, the hook's
 * stop, a redo elsewhere), its pane too, since its header, diff and buttons were of the old state:
 * a preview or refusal panel goes with them, a rewind's outcome stays. True when it re-rendered the pane.
 */
async function refresh() {
  // A rewind or redo on its way draws its own outcome, then refreshes.
  if (changingFiles()) return false;
  const { status, body, etag } = await api("/api/timeline", { etag: state.etag });
  if (status === 304 || changingFiles()) return false;
  if (status !== 200) {
    setStatus(body?.error?.message ?? `timeline failed (${status})`);
    return false;
  }
  const before = paneSignature();
  const inPane = detailEl.contains(document.activeElement);
  state.timeline = body;
  state.etag = etag;
  renderTimeline();
  if (state.selected && !findSelected()) state.selected = null;
  if (!state.selected || paneSignature() === before) return false;
  const shown = select(state.selected, false, detailEl.querySelector(".plan > .panel.done"));
  // Focus was on what the old pane showed: the new pane's first action takes it, not <body>.
  if (inPane) await focusPane(shown);
  else await shown;
  return true;
}

timelineEl.addEventListener("click", (event) => {
  const item = event.target.closest(".item");
  if (item) select(item.dataset.key);
});

keys.listenForKeys(timelineEl, {
  select,
  open: (key) => focusPane(select(key)),
  pickFile,
  file: () => state.file,
  selected: () => state.selected,
  cancel: cancelShown,
});

viewEl.addEventListener("change", () => {
  localStorage.setItem("ghostcommit.view", viewEl.value);
  if (state.selected) select(state.selected, false);
});

// A hook adding a turn shows up within two seconds; an unchanged timeline costs a 304.
setInterval(() => document.hidden || refresh(), 2000);
// Back on a tab left in the background: what it shows may be long out of date.
document.addEventListener("visibilitychange", () => document.hidden || refresh());
setInterval(() => {
  for (const el of document.querySelectorAll("[data-time]")) el.textContent = age(el.dataset.time);
}, 30000);
await refresh();
performance.mark("timeline-rendered");
document.body.dataset.ready = "true";
