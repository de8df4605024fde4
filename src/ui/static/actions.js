// Rewind (dry run first, then confirm; a refusal is shown with its paths) and redo.
const { h, api, plural, setStatus } = await import(`./dom.js${new URL(import.meta.url).search}`);

const pathList = (label, paths, kind) =>
  paths.length === 0 ? null : [h("p", {}, label), h("ul", { class: kind }, paths.map((p) => h("li", {}, p)))];

/** A refusal (conflict or open turn): its message and paths, and an explicit way past it. */
function refusal(el, body, anywayLabel, anyway, plan = null, notice = null) {
  const uncertain = body.uncertain ?? [];
  const edited = (body.conflicts ?? []).filter((p) => !uncertain.includes(p));
  el.replaceChildren(
    h(
      "div",
      { class: "panel conflict", "data-code": body.error.code },
      notice ? h("p", { class: "notice" }, `Not rewound: ${notice}. This is what it would do now.`) : null,
      h("strong", {}, "Refused: "),
      body.error.message,
      pathList("Changed since the session last changed them:", edited, "conflicts"),
      pathList("May not be this session's work (no tool call reported the change, or another session's edited it too):", uncertain, "uncertain"),
      plan ? planLists(plan, "Rewinding anyway would") : null,
      h(
        "div",
        { class: "actions" },
        h("button", { class: "danger anyway", onclick: anyway }, anywayLabel),
        h("button", { onclick: () => el.replaceChildren() }, "Cancel"),
      ),
    ),
  );
}

function failed(el, body, status) {
  el.replaceChildren(h("div", { class: "panel conflict" }, body?.error?.message ?? `request failed (${status})`));
}

/** Rewinds as `plan` (the dry run shown) said; the server refuses a rewind that would now do more or else. */
async function rewind(el, session, turn, refresh, force, plan) {
  const previewed = plan && {
    rewoundTurns: plan.rewoundTurns,
    written: plan.written,
    deleted: plan.deleted,
    overridden: plan.overridden ?? [],
  };
  const { status, body } = await api("/api/rewind", { method: "POST", body: { session, to: turn, force, previewed } });
  // Refused, or no longer what was shown (a turn ended, files changed): nothing changed; preview it afresh.
  if (status === 409) return showRewind(el, session, turn, refresh, body.error.code === "plan-changed" ? body.error.message : null);
  if (status !== 200) return failed(el, body, status);
  el.replaceChildren(
    h(
      "div",
      { class: "panel done" },
      `Rewound turns ${body.rewoundTurns.join(", ")}: wrote ${plural(body.written.length, "file")}, deleted ${body.deleted.length}. `,
      "Redo brings them back.",
    ),
  );
  setStatus(`rewound session ${session} to before turn ${turn}`);
  await refresh();
}

function planLists(plan, verb) {
  return [
    pathList(`${verb} write ${plural(plan.written.length, "file")}:`, plan.written, "written"),
    pathList(`${verb} delete ${plural(plan.deleted.length, "file")}:`, plan.deleted, "deleted"),
  ];
}

/** Shows what a rewind to before `turn` would write and delete, with "Confirm rewind" (and why it is shown again). */
export async function showRewind(el, session, turn, refresh, notice = null) {
  el.replaceChildren(h("p", { class: "muted" }, "working out what a rewind would change…"));
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
  el.replaceChildren(
    h(
      "div",
      { class: "panel preview" },
      notice ? h("p", { class: "notice" }, `Not rewound: ${notice}. This is what it would do now.`) : null,
      h("strong", {}, `Rewind turns ${body.rewoundTurns.join(", ")}`),
      nothing ? h("p", {}, "No file would change.") : null,
      planLists(body, "Will"),
      h(
        "div",
        { class: "actions" },
        h("button", { class: "primary confirm", onclick: () => rewind(el, session, turn, refresh, false, body) }, "Confirm rewind"),
        h("button", { onclick: () => el.replaceChildren() }, "Cancel"),
      ),
    ),
  );
}

/**
 * Undoes the session's last rewind, if it still brings back the `turns` shown (the server refuses
 * another, changing nothing, and the page shows the session afresh); a conflict offers "Redo anyway".
 */
export async function redo(session, turns, refresh, force = false) {
  const shown = { restoredTurns: turns ?? [] };
  const { status, body } = await api("/api/redo", { method: "POST", body: { session, force, shown } });
  if (status === 409 && body.error.code === "plan-changed") {
    setStatus(`Not redone: ${body.error.message}. This is the session now.`);
    return refresh();
  }
  if (status === 409 && body.error.code === "conflict") {
    const el = document.querySelector(".plan") ?? document.getElementById("detail");
    return refusal(el, body, "Redo anyway", () => redo(session, turns, refresh, true));
  }
  if (status !== 200) return setStatus(body?.error?.message ?? `redo failed (${status})`);
  const back = body.restoredTurns;
  setStatus(`redo: ${back.length === 1 ? "turn" : "turns"} ${back.join(", ")} of session ${session} ${back.length === 1 ? "is" : "are"} back`);
  await refresh();
}
