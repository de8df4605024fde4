// Renders one diff: the file list, then each file unified or side by side.
const { h, counts, shownPath } = await import(`./dom.js${new URL(import.meta.url).search}`);

const STATUS = { added: "A", modified: "M", deleted: "D", "type-changed": "T" };

/** Column widths for the fixed table layout (its first row is a hunk header spanning them all). */
const columns = (kinds) => h("colgroup", {}, kinds.map((kind) => h("col", { class: kind })));

function unified(file) {
  const rows = [];
  for (const hunk of file.hunks) {
    rows.push(h("tr", { class: "hunk" }, h("td", { colspan: 4 }, hunk.header)));
    for (const [kind, oldNo, newNo, text] of hunk.lines) {
      const cls = kind === "+" ? "add" : kind === "-" ? "del" : kind === "\\" ? "note" : "ctx";
      rows.push(
        h(
          "tr",
          { class: cls },
          h("td", { class: "ln" }, oldNo ?? ""),
          h("td", { class: "ln" }, newNo ?? ""),
          h("td", { class: "mark" }, kind === " " ? "" : kind),
          h("td", {}, text),
        ),
      );
    }
  }
  return h("table", { class: "diff unified" }, columns(["ln", "ln", "mark", "code"]), h("tbody", {}, rows));
}

/** Side by side: a run of removed lines is paired with the run of added lines after it. */
function split(file) {
  const rows = [];
  const cell = (line, side) =>
    line
      ? [h("td", { class: "ln" }, side === "old" ? line[1] : line[2]), h("td", { class: line[0] === "+" ? "add" : line[0] === "-" ? "del" : "" }, line[3])]
      : [h("td", { class: "ln empty" }), h("td", { class: "empty" })];
  for (const hunk of file.hunks) {
    rows.push(h("tr", { class: "hunk" }, h("td", { colspan: 4 }, hunk.header)));
    const lines = hunk.lines.filter((l) => l[0] !== "\\");
    for (let i = 0; i < lines.length; ) {
      if (lines[i][0] === " ") {
        rows.push(h("tr", {}, cell(lines[i], "old"), cell(lines[i], "new")));
        i++;
        continue;
      }
      const removed = [];
      const added = [];
      while (i < lines.length && lines[i][0] === "-") removed.push(lines[i++]);
      while (i < lines.length && lines[i][0] === "+") added.push(lines[i++]);
      for (let k = 0; k < Math.max(removed.length, added.length); k++) {
        rows.push(h("tr", {}, cell(removed[k], "old"), cell(added[k], "new")));
      }
    }
  }
  return h("table", { class: "diff split" }, columns(["ln", "code", "ln", "code"]), h("tbody", {}, rows));
}

const KIND = { "100644": "file", "100755": "file", "120000": "symlink", "160000": "submodule" };

/** A change of mode or kind, as `diff --patch` says it: git's patch text holds it in no hunk. */
function modeChange(file) {
  const { oldMode, newMode } = file;
  if (!oldMode || !newMode || oldMode === newMode) return null;
  const kinds = [KIND[oldMode] ?? "entry", KIND[newMode] ?? "entry"];
  const text =
    kinds[0] === kinds[1] ? `mode ${oldMode} → ${newMode}` : `${kinds[0]} → ${kinds[1]} (mode ${oldMode} → ${newMode})`;
  return h("p", { class: "mode" }, text);
}

function body(file, view) {
  return [modeChange(file), content(file, view)];
}

function content(file, view) {
  if (file.binary) return h("p", {}, "Binary file, not shown.");
  if (file.large) return h("p", {}, `Large diff (+${file.added} −${file.removed} lines), not shown.`);
  // git writes no hunk for a file added or deleted empty: its content did change, from or to nothing.
  if (file.hunks.length === 0 && file.status === "added") return h("p", {}, "Added as an empty file.");
  if (file.hunks.length === 0 && file.status === "deleted") return h("p", {}, "Deleted: it was an empty file.");
  if (file.hunks.length === 0) return file.oldMode === file.newMode ? h("p", {}, "No change to the content.") : null;
  return view === "split" ? split(file) : unified(file);
}

/** The diff's elements; `onPick(i)` is called when file i of the list is clicked or entered. */
/** `maybeNot`: the paths a turn's tool calls cannot account for, marked as `log` marks them. */
export function renderDiff(diff, view, onPick, maybeNot = []) {
  if (diff.files.length === 0) return [h("p", { class: "muted" }, "No files changed.")];
  const list = h(
    "ul",
    { class: "files", "aria-label": "files changed" },
    diff.files.map((file, i) =>
      h(
        "li",
        {
          "data-file": i,
          // A row is a Tab stop too: Enter (or Space) goes to its file as a click does.
          tabindex: 0,
          onclick: () => onPick(i),
          onkeydown: (event) => {
            if (event.key !== "Enter" && event.key !== " ") return;
            event.preventDefault();
            onPick(i);
          },
        },
        h("span", { class: "badge", title: file.status }, STATUS[file.status] ?? "?"),
        h("span", { class: "path" }, shownPath(file.path)),
        maybeNot.includes(file.path) ? h("span", { class: "badge maybe", title: "no tool call of the turn can account for this change" }, "maybe not the agent's") : null,
        file.binary ? h("span", { class: "badge" }, "binary") : counts(file.added, file.removed),
      ),
    ),
  );
  const blocks = diff.files.map((file, i) =>
    h(
      "section",
      { class: "file", "data-file": i },
      h("h3", {}, h("span", { class: "path" }, shownPath(file.path)), h("span", { class: "badge" }, file.status), file.binary ? null : counts(file.added, file.removed)),
      body(file, view),
    ),
  );
  return [list, ...blocks];
}
