import { readFileSync } from "node:fs";
import { parseJsonc } from "./jsonc.js";
import { isHookCommand, type Scope, SPECS } from "./specs.js";

type Json = Record<string, unknown>;

/** The names `install gemini` gives its hooks (Gemini's hookRegistry.ts matches `name`, else `command`). */
function ourNames(): string[] {
  const names: string[] = [];
  for (const group of Object.values(SPECS.gemini.entries(""))) {
    for (const hook of (group.hooks as Json[] | undefined) ?? []) {
      if (typeof hook.name === "string") names.push(hook.name);
    }
  }
  return names;
}

function objectAt(settings: unknown, key: string): Json | undefined {
  const value = (settings as Json | null)?.[key];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

/**
 * Why Gemini CLI will not run ghostcommit's hooks in `dir`, one sentence per switch that stops
 * them, from the user and project settings files. Gemini keeps its switches in `hooksConfig`
 * (settingsSchema.ts: `enabled`, "When disabled, no hooks will be executed"; `disabled`, hook
 * names that "will not execute even if configured"); older builds kept them in `hooks`. The
 * project's `enabled` overrides the user's; `disabled` lists add up.
 */
export function geminiSwitchesOff(dir: string): string[] {
  const layers: { file: string; settings: unknown }[] = [];
  for (const scope of ["user", "project"] as Scope[]) {
    const file = SPECS.gemini.file(scope, dir);
    if (layers.some((l) => l.file === file)) continue;
    try {
      layers.push({ file, settings: parseJsonc(readFileSync(file, "utf8")) });
    } catch {
      // absent or unreadable: Gemini reads no switch from it either
    }
  }
  const names = ourNames();
  const reasons: string[] = [];
  for (const [key, runs, skip] of [
    ["hooksConfig", "Gemini CLI runs", "Gemini CLI skips"],
    ["hooks", "older Gemini CLI builds run", "older Gemini CLI builds skip"],
  ]) {
    const off = layers.filter((l) => objectAt(l.settings, key)?.enabled !== undefined).at(-1);
    if (off && objectAt(off.settings, key)?.enabled === false) {
      reasons.push(
        `${runs} no hooks: "${key}": {"enabled": false} in ${off.file}, so ghostcommit records no turn (set it to true for undo)`,
      );
    }
    for (const { file, settings } of layers) {
      const list = objectAt(settings, key)?.disabled;
      const ours = (Array.isArray(list) ? list : []).filter(
        (name): name is string =>
          typeof name === "string" && (names.includes(name) || isHookCommand(name, "gemini")),
      );
      if (ours.length === 0) continue;
      reasons.push(
        `${skip} ${ours.join(", ")}: "${key}": {"disabled": [...]} in ${file} names ${ours.length > 1 ? "them" : "it"}, so ghostcommit misses those events (turns not begun, or left open with their edits uncertain); remove ${ours.length > 1 ? "them" : "it"} from the list, or use /hooks enable in Gemini CLI`,
      );
    }
  }
  return reasons;
}
