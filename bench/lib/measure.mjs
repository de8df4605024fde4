// Runs cases side by side, alternating (A B C A B C ...), and summarizes their timings.

/**
 * A case is `{ id, label, setup?(round), run(round) -> { ms, ...facts }, teardown?(result, round) }`.
 * Setup and teardown are untimed. A case that throws is dropped with its reason (the others go on).
 */
export function alternate(cases, { warmup, runs, log }) {
  const samples = new Map(cases.map((c) => [c.id, []]));
  const skipped = new Map();
  for (let round = 0; round < warmup + runs; round++) {
    const counted = round >= warmup;
    for (const c of cases) {
      if (skipped.has(c.id)) continue;
      try {
        c.setup?.(round);
        const result = c.run(round);
        c.teardown?.(result, round);
        if (counted) samples.get(c.id).push(result);
      } catch (error) {
        skipped.set(
          c.id,
          String(error.message ?? error)
            .split("\n")[0]
            .slice(0, 300),
        );
        log(`  ${c.id}: skipped (${skipped.get(c.id)})`);
      }
    }
    log(`  round ${round + 1}/${warmup + runs}${counted ? "" : " (warm-up)"} done`);
  }
  return cases.map((c) => summarize(c, samples.get(c.id), skipped.get(c.id)));
}

function summarize(c, results, skipped) {
  const out = { id: c.id, label: c.label };
  if (skipped || results.length === 0) return { ...out, skipped: skipped ?? "no runs" };
  const ms = results.map((r) => r.ms);
  out.median_ms = round(median(ms));
  out.min_ms = round(Math.min(...ms));
  out.max_ms = round(Math.max(...ms));
  out.runs_ms = ms.map(round);
  // Facts other than time (files written, bytes, RSS) are summarized by their median too.
  const keys = new Set(results.flatMap((r) => Object.keys(r)));
  keys.delete("ms");
  for (const key of keys) {
    const values = results.map((r) => r[key]).filter((v) => typeof v === "number");
    if (values.length) out[key] = /^(peak|max)/.test(key) ? Math.max(...values) : median(values);
  }
  return out;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function round(ms) {
  return Math.round(ms * 10) / 10;
}

/** Wall time of a synchronous block, in ms. */
export function time(work) {
  const started = process.hrtime.bigint();
  const value = work();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, value };
}
