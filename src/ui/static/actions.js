// Rewind (dry run first, then confirm; a refusal is shown with its paths) and redo.
const { h, api, plural, setStatus } = await import(`./dom.js${new URL(import.meta.url).search}`);

const pathList = (label, paths) =>
  paths.length === 0 ? null : [h("p", {}, label), h("ul", {}, paths.map((p) => h("li", {}, p)))];

/** A refusal (conflict or open turn): its message and paths, and an explicit way past it. */
function refusal(el, body, anywayLabel, anyway) {
  el.replaceChildren(
    h(
      "div",
      { class: "panel conflict", "data-code": body.error.code },
      h("strong", {}, "Refused: "),
      body.error.message,
      pathList("Changed since the session last touched them:", body.conflicts ?? []),
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

async function rewind(el, session, turn, refresh, force) {
  const { status, body } = await api("/api/rewind", { method: "POST", body: { session, to: turn, force } });
  if (status === 409) return refusal(el, body, "Rewind anyway", () => rewind(el, session, turn, refresh, true));
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

/** Shows what a rewind to before `turn` would write and delete, with "Confirm rewind". */
export async function showRewind(el, session, turn, refresh) {
  el.replaceChildren(h("p", { class: "muted" }, "working out what a rewind would change…"));
  const { status, body } = await api("/api/rewind", { method: "POST", body: { session, to: turn, dryRun: true } });
  if (status === 409) return refusal(el, body, "Rewind anyway", () => rewind(el, session, turn, refresh, true));
  if (status !== 200) return failed(el, body, status);
  const nothing = body.written.length === 0 && body.deleted.length === 0;
  el.replaceChildren(
    h(
      "div",
      { class: "panel preview" },
      h("strong", {}, `Rewind turns ${body.rewoundTurns.join(", ")}`),
      nothing ? h("p", {}, "No file would change.") : null,
      pathList(`Will write ${plural(body.written.length, "file")}:`, body.written),
      pathList(`Will delete ${plural(body.deleted.length, "file")}:`, body.deleted),
      h(
        "div",
        { class: "actions" },
        h("button", { class: "primary confirm", onclick: () => rewind(el, session, turn, refresh, false) }, "Confirm rewind"),
        h("button", { onclick: () => el.replaceChildren() }, "Cancel"),
      ),
    ),
  );
}

/** Undoes the session's last rewind; a refusal offers "Redo anyway". */
export async function redo(session, refresh, force = false) {
  const { status, body } = await api("/api/redo", { method: "POST", body: { session, force } });
  if (status === 409 && body.error.code === "conflict") {
    const el = document.querySelector(".plan") ?? document.getElementById("detail");
    return refusal(el, body, "Redo anyway", () => redo(session, refresh, true));
  }
  if (status !== 200) return setStatus(body?.error?.message ?? `redo failed (${status})`);
  setStatus(`redo: turns ${body.restoredTurns.join(", ")} of session ${session} are back`);
  await refresh();
}
