// Rewind (dry run first, then confirm; a refusal is shown with its paths) and redo.
const { h, fill, api, plural, turnsNamed, setStatus, shownPath } = await import(`./dom.js${new URL(import.meta.url).search}`);

const pathList = (label, paths, kind) =>
  paths.length === 0 ? null : [h("p", {}, label), h("ul", { class: kind }, paths.map((p) => h("li", {}, shownPath(p))))];

/** The button that opened the panel shown (a Rewind or Redo button): Cancel gives focus back to it. */
let opener = null;

function rememberOpener() {
  const el = document.activeElement;
  if (el?.tagName === "BUTTON" && !el.closest(".panel")) opener = el;
}

/** Closes the panel; focus goes back to its opener (or, the pane drawn afresh since, its first action). */
function cancel(el) {
  el.replaceChildren();
  (opener?.isConnected ? opener : document.querySelector("#detail .actions button"))?.focus();
}

/** Escape: the Cancel of the preview or refusal shown, if one is; false when none is open. */
export function cancelShown() {
  const button = document.querySelector("#detail .panel button.cancel");
  button?.click();
  return Boolean(button);
}

/** Shows `panel` in `el`; focus that was on the panel it replaces moves to it, not to <body>. */
function put(el, panel) {
  const had = el.contains(document.activeElement);
  fill(el, panel);
  if (!had) return;
  panel.tabIndex = -1;
  panel.focus();
}

const REWIND_WORDS = { not: "Not rewound", anyway: "Rewinding anyway would" };
const REDO_WORDS = { not: "Not redone", anyway: "Redoing anyway would" };

/** A refusal (conflict or open turn): its message and paths, what forcing would do, and an explicit way past it. */
function refusal(el, body, anywayLabel, anyway, plan = null, notice = null, words = REWIND_WORDS) {
  const uncertain = body.uncertain ?? [];
  const edited = (body.conflicts ?? []).filter((p) => !uncertain.includes(p));
  put(
    el,
    h(
      "div",
      { class: "panel conflict", "data-code": body.error.code },
      notice ? h("p", { class: "notice" }, `${words.not}: ${notice}. This is what it would do now.`) : null,
      h("strong", {}, "Refused: "),
      // "rewind refused: …" after "Refused:" would say it twice.
      body.error.message.replace(/^(rewind|redo) refused: /, ""),
      pathList("Changed since the session last changed them:", edited, "conflicts"),
      pathList("May not be this session's work (no tool call reported the change, or another session's edited it too):", uncertain, "uncertain"),
      // Forcing past an open turn ends it and rewinds it too: said before the files it would write.
      body.error.code === "open-turn" && plan
        ? h("p", { class: "open-turn" }, `${words.anyway} end turn ${plan.rewoundTurns.at(-1)}, which may still be running, and rewind ${turnsNamed(plan.rewoundTurns)}.`)
        : null,
      plan ? planLists(plan, words.anyway) : null,
      h(
        "div",
        { class: "actions" },
        h("button", { class: "danger anyway", onclick: anyway }, anywayLabel),
        h("button", { class: "cancel", onclick: () => cancel(el) }, "Cancel"),
      ),
    ),
  );
}

function failed(el, body, status) {
  const message = body?.error?.message ?? `request failed (${status})`;
  put(el, h("div", { class: "panel conflict" }, message));
  // The server gone: the status bar says so at once, as the pane does, not at the next poll.
  if (status === 0) setStatus(message);
}

/** Rewinds as `plan` (the dry run shown) said; the server refuses a rewind that would now do more or else. */
async function rewind(el, session, turn, refresh, force, plan) {
  const previewed = plan && {
    rewoundTurns: plan.rewoundTurns,
    written: plan.written,
    deleted: plan.deleted,
    overridden: plan.overridden ?? [],
    // What each of those held when shown: one edited again since is refused, not overwritten unseen.
    ...(plan.overriddenState ? { overriddenState: plan.overriddenState } : {}),
  };
  const { status, body } = await api("/api/rewind", { method: "POST", body: { session, to: turn, force, previewed } });
  // Refused, or no longer what was shown (a turn ended, files changed): nothing changed; preview it afresh.
  if (status === 409) return showRewind(el, session, turn, refresh, body.error.code === "plan-changed" ? body.error.message : null);
  if (status !== 200) return failed(el, body, status);
  put(
    el,
    h(
      "div",
      { class: "panel done" },
      `Rewound ${turnsNamed(body.rewoundTurns)}: wrote ${plural(body.written.length, "file")}, deleted ${body.deleted.length}. `,
      `Redo brings ${body.rewoundTurns.length === 1 ? "it" : "them"} back.`,
      leftList(body.skipped, "Did"),
    ),
  );
  setStatus(`rewound session ${session} to before turn ${turn}`);
  await refresh();
}

/** Why a rewind or redo leaves a path as it is (its `skipped` reason), in a person's words. */
const LEFT_BECAUSE = {
  "not-captured": "its content before the turn was never captured",
  excluded: "a snapshot left it out",
  permission: "no permission to change it",
  io: "it could not be written",
};

/** The paths it leaves as they are, each with why: what it cannot undo is said, never silent. */
function leftList(skipped, verb) {
  if (!skipped?.length) return null;
  const one = skipped.length === 1;
  const files = plural(skipped.length, "file");
  const label =
    verb === "Did"
      ? `Left ${files} as ${one ? "it was" : "they were"}:`
      : `${verb} leave ${files} as ${one ? "it is" : "they are"}:`;
  const items = skipped.map((s) => h("li", {}, shownPath(s.path), ` (${LEFT_BECAUSE[s.reason] ?? s.reason})`));
  return [h("p", {}, label), h("ul", { class: "skipped" }, items)];
}

function planLists(plan, verb) {
  return [
    pathList(`${verb} write ${plural(plan.written.length, "file")}:`, plan.written, "written"),
    pathList(`${verb} delete ${plural(plan.deleted.length, "file")}:`, plan.deleted, "deleted"),
    leftList(plan.skipped, verb),
  ];
}

/** Shows what a rewind to before `turn` would write and delete, with "Confirm rewind" (and why it is shown again). */
export async function showRewind(el, session, turn, refresh, notice = null) {
  rememberOpener();
  put(el, h("p", { class: "muted" }, "working out what a rewind would change…"));
  const dryRun = (force) => api("/api/rewind", { method: "POST", body: { session, to: turn, dryRun: true, force } });
  const { status, body } = await dryRun(false);
  if (status === 409) {
    // Refused: show why, and what forcing it would write and delete.
    const forced = await dryRun(true);
    const anyway = () => rewind(el, session, turn, refresh, true, forced.status === 200 ? forced.body : null);
    return refusal(el, body, "Rewind anyway", anyway, forced.status === 200 ? forced.body : null, notice);
  }
  if (status !== 200) return failed(el, body, status);
  const nothing = body.written.length === 0 && body.deleted.length === 0;
  put(
    el,
    h(
      "div",
      { class: "panel preview" },
      notice ? h("p", { class: "notice" }, `Not rewound: ${notice}. This is what it would do now.`) : null,
      h("strong", {}, `Rewind ${turnsNamed(body.rewoundTurns)}`),
      nothing ? h("p", {}, "No file would change.") : null,
      planLists(body, "Will"),
      h(
        "div",
        { class: "actions" },
        h("button", { class: "primary confirm", onclick: () => rewind(el, session, turn, refresh, false, body) }, "Confirm rewind"),
        h("button", { class: "cancel", onclick: () => cancel(el) }, "Cancel"),
      ),
    ),
  );
}

/** What a redo sends as `shown`: its turns, and the files and conflicts its dry run showed, if any. */
const redoShown = (turns, plan) => ({
  restoredTurns: turns ?? [],
  ...(plan ? { written: plan.written, deleted: plan.deleted, overridden: plan.overridden ?? [] } : {}),
  ...(plan?.overriddenState ? { overriddenState: plan.overriddenState } : {}),
});

const redoPanel = () => document.querySelector(".plan") ?? document.getElementById("detail");

/**
 * Undoes the session's last rewind, if it still brings back the `turns` shown (the server refuses
 * another, changing nothing, and the page shows the session afresh); a conflict offers "Redo
 * anyway", which overwrites only the conflicts it showed (`plan`, a forced dry run): a file
 * edited since is refused too, and the refusal shown afresh.
 */
export async function redo(session, turns, refresh, force = false, plan = null) {
  rememberOpener();
  const shown = redoShown(turns, plan);
  const { status, body } = await api("/api/redo", { method: "POST", body: { session, force, shown } });
  if (status === 409 && body.error.code === "plan-changed" && plan) return showRedo(session, turns, refresh, body.error.message);
  if (status === 409 && body.error.code === "plan-changed") {
    setStatus(`Not redone: ${body.error.message}. This is the session now.`);
    return refresh();
  }
  if (status === 409 && body.error.code === "conflict") return redoRefusal(session, turns, refresh, body);
  if (status !== 200) return setStatus(body?.error?.message ?? `redo failed (${status})`);
  const back = body.restoredTurns;
  // In place of the pane's "Rewound …" outcome, which would go on saying the turns are rewound.
  const el = redoPanel();
  if (el.classList.contains("plan")) {
    put(
      el,
      h(
        "div",
        { class: "panel done" },
        `Redid ${turnsNamed(back)}: wrote ${plural(body.written.length, "file")}, deleted ${body.deleted.length}.`,
        leftList(body.skipped, "Did"),
      ),
    );
  }
  setStatus(`redo: ${turnsNamed(back)} of session ${session} ${back.length === 1 ? "is" : "are"} back`);
  await refresh();
}

/** A redo's conflict, with what "Redo anyway" would write, delete and overwrite (a forced dry run). */
async function redoRefusal(session, turns, refresh, body, notice = null) {
  const dryRun = { session, force: true, dryRun: true, shown: redoShown(turns) };
  const forced = await api("/api/redo", { method: "POST", body: dryRun });
  const plan = forced.status === 200 ? forced.body : null;
  const anyway = () => redo(session, turns, refresh, true, plan);
  refusal(redoPanel(), body, "Redo anyway", anyway, plan, notice, REDO_WORDS);
}

/** A "Redo anyway" refused because the files changed since it was shown: what the redo would do now. */
async function showRedo(session, turns, refresh, notice) {
  const { status, body } = await api("/api/redo", { method: "POST", body: { session, dryRun: true, shown: redoShown(turns) } });
  if (status === 409 && body.error.code === "conflict") return redoRefusal(session, turns, refresh, body, notice);
  if (status !== 200) {
    setStatus(`Not redone: ${body?.error?.message ?? notice}. This is the session now.`);
    return refresh();
  }
  const el = redoPanel();
  put(
    el,
    h(
      "div",
      { class: "panel preview" },
      h("p", { class: "notice" }, `Not redone: ${notice}. This is what it would do now.`),
      h("strong", {}, `Redo ${turnsNamed(body.restoredTurns)}`),
      planLists(body, "Will"),
      h(
        "div",
        { class: "actions" },
        h("button", { class: "primary redo", onclick: () => redo(session, turns, refresh, false, body) }, "Redo"),
        h("button", { class: "cancel", onclick: () => cancel(el) }, "Cancel"),
      ),
    ),
  );
}
