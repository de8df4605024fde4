import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { codexHome } from "./specs.js";

/** The feature flags that switch Codex's hooks on or off: `hooks`, and `codex_hooks`, its older name. */
const HOOK_FLAGS = ["features.hooks", "features.codex_hooks"];

/**
 * The boolean keys a TOML file sets, by their full dotted names: `[table]` headers, dotted keys
 * and one-line inline tables (`features = { hooks = false }`). Enough for Codex's feature flags;
 * anything else in the file is passed over.
 */
function booleansOf(text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  let table = "";
  const unquote = (key: string) => key.replace(/["'\s]/g, "");
  let inString: string | null = null; // inside a multi-line string: text, not keys
  for (const raw of text.split(/\r?\n/)) {
    if (inString) {
      if (raw.includes(inString)) inString = null;
      continue;
    }
    const opens = /("""|''')/.exec(raw)?.[1];
    if (opens && raw.split(opens).length === 2) inString = opens;
    const line = raw.replace(/\s+#.*$/, "").trim();
    const header = /^\[\[?([^\][]+)\]\]?$/.exec(line);
    if (header) {
      table = unquote(header[1]);
      continue;
    }
    const inline = /^([\w."'-]+)\s*=\s*\{(.*)\}$/.exec(line);
    const pairs = inline ? inline[2].split(",").map((pair) => `${inline[1]}.${pair.trim()}`) : [line];
    for (const pair of pairs) {
      const match = /^([\w."'-]+)\s*=\s*(true|false)$/.exec(pair.trim());
      if (match) out.set(`${table ? `${table}.` : ""}${unquote(match[1])}`, match[2] === "true");
    }
  }
  return out;
}

/**
 * What Codex's `config.toml` files (its home's, then each `.codex/` from the project's root down to
 * `dir`, the nearest winning, as Codex layers them) say of
 * its hooks: `off`, a sentence for a flag that switches them off (Codex's docs: hooks are on by
 * default, `[features] hooks = false` disables them; `codex_hooks` is the deprecated name);
 * `on`, whether a file switches them on, as older Codex builds needed.
 */
export function codexHookSwitches(dir: string): { off: string[]; on: boolean } {
  let home: string | null;
  try {
    home = codexHome();
  } catch {
    home = null; // a relative CODEX_HOME: no one file to read (install says so)
  }
  const projects = projectDirs(path.resolve(dir)).map((d) => path.join(d, ".codex", "config.toml"));
  const files = [home && path.join(home, "config.toml"), ...projects];
  let setting: { value: boolean; file: string; key: string } | null = null;
  for (const file of new Set(files.filter((f): f is string => f !== null))) {
    let flags: Map<string, boolean>;
    try {
      flags = booleansOf(readFileSync(file, "utf8"));
    } catch {
      continue; // absent or unreadable: Codex reads no switch from it either
    }
    for (const key of HOOK_FLAGS) {
      const value = flags.get(key);
      if (value !== undefined) setting = { value, file, key };
    }
  }
  if (!setting) return { off: [], on: false };
  if (setting.value) return { off: [], on: true };
  const [table, key] = setting.key.split(".");
  return {
    off: [
      `Codex runs no hooks: \`${key} = false\` under [${table}] in ${setting.file}, so ghostcommit records no turn (remove it, or set it to true, for undo)`,
    ],
    on: false,
  };
}

/** The directories from the repository `dir` is in (its root: the nearest with a `.git`) down to `dir`; `dir` alone outside one. */
function projectDirs(dir: string): string[] {
  const chain: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    chain.unshift(at);
    if (existsSync(path.join(at, ".git"))) return chain;
    if (path.dirname(at) === at) return [dir];
  }
}
