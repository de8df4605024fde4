import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Sandbox } from "../helpers/repo.js";

let sb: Sandbox;
beforeEach(() => {
  sb = new Sandbox();
});
afterEach(() => sb.cleanup());

describe("a home-like plain directory", () => {
  it("finishes within its budget and reports what it left out", () => {
    const dir = sb.dir("home");
    writeFileSync(path.join(dir, ".ghostcommit.json"), JSON.stringify({ budgetFiles: 2000 }));
    let files = 1;
    for (let d = 0; d < 60; d++) {
      const sub = path.join(dir, `docs${d}`);
      mkdirSync(sub);
      for (let f = 0; f < 100; f++, files++) writeFileSync(path.join(sub, `n${f}.txt`), `${d}/${f}\n`);
    }
    mkdirSync(path.join(dir, ".cache/x"), { recursive: true });
    for (let f = 0; f < 500; f++) writeFileSync(path.join(dir, ".cache/x", `c${f}`), "cache\n");
    writeFileSync(path.join(dir, "movie.bin"), Buffer.alloc(12 * 1024 * 1024, 1));
    const snap = sb.ok(dir, "snapshot");
    expect(snap.fileCount).toBeLessThanOrEqual(2000);
    expect(snap.fileCount).toBeGreaterThan(0);
    const reasons = new Map<string, number>();
    for (const e of snap.excluded) reasons.set(e.reason, (reasons.get(e.reason) ?? 0) + (e.files ?? 1));
    expect(reasons.get("budget")).toBe(files - snap.fileCount);
    expect(snap.excluded).toContainEqual(
      expect.objectContaining({ path: ".cache", reason: "dependency-dir" }),
    );
    expect(snap.excluded).toContainEqual(
      expect.objectContaining({ path: "movie.bin", reason: "large-file" }),
    );
    // The next snapshot still finishes, and the list stays readable.
    expect(sb.ok(dir, "snapshot").fileCount).toBeLessThanOrEqual(2000);
    expect(sb.ok(dir, "list")).toHaveLength(2);
  }, 60_000);
});
