import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyUntracked, ghostignoreMatch } from "../../src/capture/policy.js";
import type { FileState } from "../../src/git/trees.js";
import { isWithin } from "../../src/paths.js";
import { type PathChange, planRestore, proveAbsent } from "../../src/restore/plan.js";

const segment = fc.constantFrom("a", "b", "c", "node_modules", ".git", "x.txt", "d");
const relPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/"));
const state = fc.record({
  mode: fc.constantFrom("100644", "100755", "120000"),
  oid: fc.constantFrom("1".repeat(40), "2".repeat(40), "3".repeat(40)),
});
const tree = fc.dictionary(relPath, state, { maxKeys: 12 });

/** The pure changes between two flat trees, as diff-tree reports them. */
function changesBetween(current: Record<string, FileState>, target: Record<string, FileState>): PathChange[] {
  const paths = new Set([...Object.keys(current), ...Object.keys(target)]);
  return [...paths].map((path) => ({ path, current: current[path] ?? null, target: target[path] ?? null }));
}

describe("restore planning (property-based)", () => {
  it("never deletes an unproven path, never touches an untouchable or .git path", () => {
    fc.assert(
      fc.property(
        tree,
        tree,
        fc.array(relPath, { maxLength: 4 }),
        fc.array(relPath, { maxLength: 3 }),
        (now, target, excluded, untouchable) => {
          const changes = changesBetween(now, target);
          const candidates = changes.filter((c) => c.current && !c.target).map((c) => c.path);
          const filesInTarget = new Set(Object.keys(target));
          const proven = proveAbsent(candidates, filesInTarget, excluded, () => false);
          const isUntouchable = (p: string) => untouchable.some((u) => isWithin(p, u));
          const steps = planRestore({
            changes,
            provenAbsent: proven,
            presentUncaptured: new Map(),
            untouchable: isUntouchable,
          });
          for (const step of steps) {
            if (step.kind === "delete") {
              expect(proven.has(step.path)).toBe(true);
              expect(target[step.path]).toBeUndefined();
            }
            if (step.kind !== "skip") {
              expect(isUntouchable(step.path)).toBe(false);
              expect(step.path.split("/")).not.toContain(".git");
            }
          }
          for (const path of proven) {
            // proof: no exclusion of the target covers it, unless a file of the target is its ancestor
            const underFile = [...filesInTarget].some((f) => path.startsWith(`${f}/`));
            if (!underFile) expect(excluded.some((e) => isWithin(path, e))).toBe(false);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("applying a plan to the snapshot's own tree is a no-op", () => {
    fc.assert(
      fc.property(tree, (t) => {
        const steps = planRestore({
          changes: changesBetween(t, t),
          provenAbsent: new Set(Object.keys(t)),
          presentUncaptured: new Map(),
          untouchable: () => false,
        });
        expect(steps.filter((s) => s.kind !== "skip")).toEqual([]);
      }),
    );
  });

  it("a path present on disk but not captured now is never overwritten", () => {
    fc.assert(
      fc.property(tree, tree, (now, target) => {
        const changes = changesBetween(now, target);
        const uncaptured = new Map(
          changes.filter((c) => !c.current && c.target).map((c) => [c.path, null] as const),
        );
        const steps = planRestore({
          changes,
          provenAbsent: new Set(),
          presentUncaptured: uncaptured,
          untouchable: () => false,
        });
        for (const step of steps) if (step.kind === "write") expect(uncaptured.has(step.path)).toBe(false);
      }),
    );
  });
});

describe("classifyUntracked (property-based)", () => {
  it("every untracked path is captured or covered by exactly the exclusions reported; nothing under a dependency dir is captured", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(relPath, { maxLength: 30 }),
        fc.integer({ min: 0, max: 5 }),
        (paths, limit) => {
          const files = paths.filter((p) => !paths.some((q) => q.startsWith(`${p}/`)));
          const result = classifyUntracked({
            untracked: files,
            dependencyDirs: new Set(["node_modules"]),
            largeDirFiles: limit,
            ghostignore: null,
            isTrackedDir: () => false,
          });
          const captured = new Set(result.capture);
          for (const file of files) {
            const covered = result.excluded.some((e) => isWithin(file, e.path));
            expect(captured.has(file) !== covered).toBe(true);
            if (file.split("/").slice(0, -1).includes("node_modules")) expect(captured.has(file)).toBe(false);
          }
          for (const e of result.excluded) {
            expect(e.path).not.toBe("");
            expect(e.path.endsWith("/")).toBe(false);
            const below = files.filter((f) => isWithin(f, e.path)).length;
            if (e.files !== undefined) expect(e.files).toBeLessThanOrEqual(below);
          }
          expect(ghostignoreMatch("a", null)).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });
});
