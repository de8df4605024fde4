// Ratios, the performance bars and the printed tables.

const byId = (tree, id) => tree.cases.find((c) => c.id === id);
const ok = (c) => c && !c.skipped;

/** Ratio of two cases' medians, or null if either is missing. */
export function ratio(tree, a, b) {
  const x = byId(tree, a);
  const y = byId(tree, b);
  return ok(x) && ok(y) ? Math.round((x.median_ms / y.median_ms) * 100) / 100 : null;
}

/** Ratios of every case to the floor, and of ghostcommit's snapshots to each anchor. */
export function ratios(tree) {
  const out = {};
  for (const c of tree.cases) if (c.id !== "status") out[`${c.id}/status`] = ratio(tree, c.id, "status");
  const pairs = [
    ["snapshot_first", "codex_v1"],
    ["snapshot_later", "codex_v1"],
    ["snapshot_first", "codex_v2"],
    ["snapshot_later", "codex_v2"],
    ["snapshot_first", "opencode_first"],
    ["snapshot_later", "opencode_later"],
    ["snapshot_first", "add_all_fresh"],
  ];
  for (const [a, b] of pairs) if (byId(tree, b)) out[`${a}/${b}`] = ratio(tree, a, b);
  return out;
}

function bar(id, label, value, limit, extra = {}) {
  const { pass: also = true, ...facts } = extra;
  const pass = value === null ? null : value <= limit && also;
  return { id, label, value, limit, ...facts, pass };
}

/** The performance bars, judged on the big git trees (each one in `gitTrees`) and the plain tree. */
export function bars(gitTrees, plainTree) {
  const out = [];
  for (const gitTree of gitTrees) {
    const before = out.length;
    const r = gitTree.ratios;
    out.push(
      bar("snapshot_first", "snapshot, first in a new store ≤ 1.5× status", r["snapshot_first/status"], 1.5),
    );
    out.push(bar("snapshot_later", "snapshot, later ≤ 1.3× status", r["snapshot_later/status"], 1.3));
    out.push(
      bar(
        "snapshot_later_library",
        "(same, as a library call in a running process) ≤ 1.0× status",
        r["snapshot_later_library/status"],
        1.0,
      ),
    );
    if (byId(gitTree, "snapshot_later_watchman")) {
      out.push(
        bar(
          "snapshot_later_watchman",
          "snapshot, later, with Watchman ≤ 1.0× status",
          r["snapshot_later_watchman/status"],
          1.0,
        ),
        bar(
          "snapshot_later_library_watchman",
          "(same, as a library call in a running process) ≤ 0.5× status",
          r["snapshot_later_library_watchman/status"],
          0.5,
        ),
      );
    }
    const restore = byId(gitTree, "restore");
    const exact = ok(restore) && restore.written === 20 && restore.maxWrongWrites === 0;
    out.push(
      bar("restore", "restore of 20 paths ≤ 1.5× status, only those 20 written", r["restore/status"], 1.5, {
        pass: exact,
        written: restore?.written ?? null,
      }),
    );
    const turn = byId(gitTree, "turn");
    out.push(
      bar(
        "turn",
        "turn begin + turn end ≤ 2.5× status",
        r["turn/status"],
        2.5,
        turn?.skipped ? { skipped: turn.skipped } : {},
      ),
    );
    const later = byId(gitTree, "snapshot_later");
    const disk = ok(later) ? Math.round((later.growthBytes / later.changedBytes) * 100) / 100 : null;
    out.push(bar("disk", "disk growth per snapshot ≤ 2× compressed changed content", disk, 2));
    for (const b of out.slice(before)) b.label = `${gitTree.name}: ${b.label}`;
  }
  if (plainTree) {
    out.push(
      bar(
        "plain_first",
        "plain dir, first ≤ 1.5× git add -A into a fresh repo",
        ratio(plainTree, "snapshot_first", "add_all_fresh"),
        1.5,
      ),
    );
    out.push(
      bar(
        "plain_later",
        "plain dir, later ≤ 1.5× status of the store",
        ratio(plainTree, "snapshot_later", "status"),
        1.5,
      ),
    );
  }
  return out;
}

const ms = (v) => (v === undefined ? "" : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`);
const bytes = (v) => (v >= 1 << 20 ? `${(v / (1 << 20)).toFixed(1)} MiB` : `${(v / 1024).toFixed(1)} KiB`);

function notes(c) {
  const parts = [];
  if (c.written !== undefined) parts.push(`wrote ${c.written}`);
  if (c.backgroundMs) parts.push(`then ${ms(c.backgroundMs)} building git's cache in the background`);
  if (c.growthBytes !== undefined) parts.push(`+${bytes(c.growthBytes)} disk`);
  if (c.changedBytes !== undefined) parts.push(`changed ${bytes(c.changedBytes)} zlib`);
  if (c.storeBytes !== undefined) parts.push(`store ${bytes(c.storeBytes)}`);
  if (c.objectBytes !== undefined) parts.push(`objects ${bytes(c.objectBytes)}`);
  if (c.peakRssKiB !== undefined) parts.push(`RSS ${(c.peakRssKiB / 1024).toFixed(0)} MiB`);
  return parts.join(", ");
}

/** The printed report, one table per tree, then the bars and the profile. */
export function format(result) {
  const lines = [];
  for (const tree of result.trees) {
    lines.push("", `${tree.name}: ${tree.description}`);
    lines.push(
      `${"case".padEnd(64)} ${"median".padStart(9)} ${"min".padStart(9)} ${"max".padStart(9)} ${"×status".padStart(8)}  notes`,
    );
    for (const c of tree.cases) {
      if (c.skipped) {
        lines.push(`${c.label.padEnd(64)} skipped: ${c.skipped}`);
        continue;
      }
      const r = c.id === "status" ? 1 : tree.ratios[`${c.id}/status`];
      lines.push(
        `${c.label.padEnd(64)} ${ms(c.median_ms).padStart(9)} ${ms(c.min_ms).padStart(9)} ${ms(c.max_ms).padStart(9)} ${`${r.toFixed(2)}×`.padStart(8)}  ${notes(c)}`,
      );
    }
    const anchors = Object.entries(tree.ratios).filter(([k, v]) => !k.endsWith("/status") && v !== null);
    if (anchors.length)
      lines.push(`  ghostcommit / anchors: ${anchors.map(([k, v]) => `${k} ${v}×`).join(", ")}`);
  }
  lines.push(...formatScale(result.trees));
  lines.push("", "bars:");
  if (result.bars.length === 0)
    lines.push("  none judged: SPEC §7's bars are for the generated 100k and plain trees");
  for (const b of result.bars) {
    const verdict = b.pass === null ? "n/a " : b.pass ? "PASS" : "FAIL";
    const why = b.skipped
      ? ` (skipped: ${b.skipped})`
      : b.written !== undefined
        ? ` (wrote ${b.written})`
        : "";
    lines.push(`  ${verdict}  ${b.label}: ${b.value ?? "-"}${b.value === null ? "" : "×"}${why}`);
  }
  if (result.profile) lines.push("", ...formatProfile(result.profile));
  return lines.join("\n");
}

/** How the git cases grow with the tree: medians and ratios to status, and peak RSS. */
function formatScale(trees) {
  const curve = trees
    .filter((t) => t.kind === "git" && (t.spec.scale || t.spec.bars) && !t.spec.attributes)
    .sort((a, b) => fileCountOf(a.spec) - fileCountOf(b.spec));
  if (curve.length < 2) return [];
  const ids = ["status", "snapshot_first", "snapshot_later", "snapshot_later_library", "restore"];
  const lines = ["", "scale curve (median, ×status, peak RSS of the node process):"];
  lines.push(`${"files".padStart(9)}  ${ids.map((id) => id.padEnd(26)).join(" ")}`);
  for (const tree of curve) {
    const cells = ids.map((id) => {
      const c = byId(tree, id);
      if (!ok(c)) return "-".padEnd(26);
      const r = id === "status" ? "" : ` ${tree.ratios[`${id}/status`]}×`;
      const rss = c.peakRssKiB ? ` ${(c.peakRssKiB / 1024).toFixed(0)}M` : "";
      return `${ms(c.median_ms)}${r}${rss}`.padEnd(26);
    });
    lines.push(`${fileCountOf(tree.spec).toLocaleString("en").padStart(9)}  ${cells.join(" ")}`);
  }
  return lines;
}

const fileCountOf = (spec) => spec.top * spec.mid * spec.leaf * spec.filesPerLeaf;

function formatProfile(profile) {
  const lines = [`profile of one snapshot (${profile.tree}):`];
  lines.push(
    `  node -e 0: ${ms(profile.nodeStartMs)} (${ms(profile.nodeStartCallerEnvMs)} in the caller's environment); node dist/ghostcommit.cjs --version (start-up + loading the CLI, code cache written): ${ms(profile.cliImportMs)}`,
  );
  for (const p of profile.snapshots) {
    lines.push(
      `  ${p.kind}: total ${ms(p.totalMs)}; ${p.gitProcesses} git processes, ${ms(p.gitSumMs)} summed, ${ms(p.gitBusyMs)} wall with git running; node alone ${ms(p.nodeOnlyMs)}`,
    );
    for (const c of p.processes) {
      lines.push(
        `    ${"  ".repeat(c.depth - 1)}+${ms(c.startMs).padStart(8)} ${ms(c.ms).padStart(8)}  git ${c.command}${c.background ? " (detached, after the command exited)" : ""}`,
      );
    }
  }
  return lines;
}
