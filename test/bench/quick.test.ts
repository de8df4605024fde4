import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

// Runs the benchmark in --quick mode so it cannot rot. Checks that it completes and what it
// reports, never how fast anything was.
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const temp = mkdtempSync(path.join(os.tmpdir(), "ghostcommit-bench-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
// Where Watchman is installed, later snapshots, restore and turns are measured with it too.
const watchman = spawnSync("watchman", ["--version"]).status === 0;
const watchedRoots = (): string[] =>
  JSON.parse(
    spawnSync("watchman", ["--no-pretty", "--no-spawn", "watch-list"], { encoding: "utf8" }).stdout || "{}",
  ).roots ?? [];

interface CaseResult {
  id: string;
  label: string;
  median_ms?: number;
  min_ms?: number;
  max_ms?: number;
  skipped?: string;
}

describe("npm run bench -- --quick", () => {
  it("completes and writes the JSON report", { timeout: 90_000 }, async () => {
    const out = path.join(temp, "quick.json");
    const { stdout } = await run(
      process.execPath,
      ["bench/run.mjs", "--quick", "--out", out, "--trees", path.join(temp, "trees")],
      { cwd: root, maxBuffer: 64 << 20 },
    );
    expect(stdout).toContain("bars:");
    const report = JSON.parse(readFileSync(out, "utf8"));
    expect(report).toMatchObject({ schema: 1, mode: "quick", runs: 1, warmup: 0 });
    expect(report.trees.map((t: { kind: string }) => t.kind)).toEqual(["git", "plain"]);
    const [repo, plain] = report.trees as { cases: CaseResult[]; ratios: Record<string, number | null> }[];
    const ids = (cases: CaseResult[]) => cases.map((c) => c.id);
    expect(ids(repo.cases)).toEqual([
      "status",
      "snapshot_first",
      "snapshot_first_new_home",
      "snapshot_later",
      "snapshot_later_library",
      "snapshot_later_library_cold",
      "restore",
      ...(watchman
        ? [
            "snapshot_later_watchman",
            "snapshot_later_library_watchman",
            "snapshot_later_library_watchman_cold",
            "restore_watchman",
            "turn_watchman",
          ]
        : []),
      "turn",
      "codex_v1",
      "codex_v2",
      "opencode_first",
      "opencode_later",
    ]);
    expect(ids(plain.cases)).toEqual([
      "status",
      "add_all_fresh",
      "snapshot_first",
      "snapshot_later",
      "snapshot_later_library",
      "snapshot_later_library_cold",
    ]);
    for (const c of [...repo.cases, ...plain.cases]) {
      // Only the session commands may be missing (skipped with a reason); everything else ran.
      if (c.id.startsWith("turn") && c.skipped) continue;
      expect(c.skipped, `${c.id}: ${c.skipped}`).toBeUndefined();
      expect(c.median_ms).toBeGreaterThan(0);
      expect(c.min_ms).toBeLessThanOrEqual(c.max_ms!);
    }
    const restore = repo.cases.find((c) => c.id === "restore") as CaseResult & { written: number };
    expect(restore.written).toBe(20);
    expect(typeof repo.ratios["snapshot_later/status"]).toBe("number");
    expect(report.bars.map((b: { id: string }) => b.id)).toEqual([
      "snapshot_first",
      "snapshot_later",
      "snapshot_later_library",
      ...(watchman ? ["snapshot_later_watchman", "snapshot_later_library_watchman"] : []),
      "restore",
      "turn",
      "disk",
      "plain_first",
      "plain_later",
    ]);
    for (const bar of report.bars) expect(typeof bar.limit).toBe("number");
    expect(report.profile.snapshots.map((s: { kind: string }) => s.kind)).toEqual(["first", "later"]);
    expect(report.profile.snapshots[0].processes.length).toBeGreaterThan(0);
    // The watches the bench started are gone.
    if (watchman) expect(watchedRoots().filter((r) => r.startsWith(temp))).toEqual([]);
  });
});
