import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The layers of src/, lowest first. A module may import its own layer and the layers below it,
// never one above: git knows nothing of stores, a store nothing of captures, and so on up to the
// faces (library entry, CLI, integrations, web timeline). Layers on one rank do not import each other.
const LAYERS: { name: string; rank: number; owns: (file: string) => boolean }[] = [
  {
    name: "base",
    rank: 0,
    owns: (f) =>
      /^(errors|paths|types|config)\.ts$/.test(f) || f.startsWith("util/") || f.startsWith("types/"),
  },
  { name: "git", rank: 1, owns: (f) => f.startsWith("git/") },
  { name: "store", rank: 2, owns: (f) => f.startsWith("store/") },
  { name: "capture", rank: 3, owns: (f) => f.startsWith("capture/") },
  { name: "restore", rank: 4, owns: (f) => f.startsWith("restore/") },
  { name: "session", rank: 5, owns: (f) => f.startsWith("session/") },
  { name: "maintenance", rank: 6, owns: (f) => f.startsWith("maintenance/") },
  { name: "library", rank: 7, owns: (f) => f === "workspace.ts" || f === "index.ts" },
  { name: "integrations", rank: 8, owns: (f) => f.startsWith("integrations/") },
  { name: "ui", rank: 8, owns: (f) => f.startsWith("ui/") },
  { name: "cli", rank: 9, owns: (f) => f.startsWith("cli/") },
];

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [path.relative(SRC, full).split(path.sep).join("/")] : [];
  });
}

function layerOf(file: string) {
  const layer = LAYERS.find((l) => l.owns(file));
  if (!layer) throw new Error(`${file} belongs to no layer: add its folder to LAYERS`);
  return layer;
}

/** Relative imports of a module, static and dynamic, as src-relative .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), "utf8");
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|^import\s+)["'](\.{1,2}\/[^"']+)["']/gm)].map(
    (m) => m[1],
  );
  return specs.map((spec) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, ".ts"),
  );
}

describe("the layers of src/", () => {
  it("every module belongs to a layer", () => {
    for (const file of sourceFiles()) expect(() => layerOf(file)).not.toThrow();
  });

  it("imports point only down the layers, never up or sideways", () => {
    const violations: string[] = [];
    for (const file of sourceFiles()) {
      const from = layerOf(file);
      for (const target of importsOf(file)) {
        const to = layerOf(target);
        const sideways = to.rank === from.rank && to.name !== from.name && to.rank !== 0;
        if (to.rank > from.rank || sideways)
          violations.push(`${file} (${from.name}) imports ${target} (${to.name})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("the check sees an upward import (it can fail)", () => {
    expect(layerOf("store/context.ts").rank).toBeLessThan(layerOf("capture/snapshot.ts").rank);
    expect(importsOf("capture/snapshot.ts")).toContain("store/context.ts");
  });
});
