import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runGit } from "../git/exec.js";
import type { StoreContext } from "../store/context.js";
import { validHead } from "../store/layout.js";
import { STORE_CONFIG } from "../store/store-config.js";

/**
 * The frame of the store's git directory: the few files and directories that make it one (what
 * store creation writes). Removed or damaged by hand, every command failed and `list` showed no
 * snapshots although their refs and objects were all there; they are fixed content, so they can
 * be written again.
 */
const HEAD = "ref: refs/heads/main\n";

/** What of the frame is missing or unreadable; empty when whole, or when there is no store at all. */
export async function damagedFrame(engine: StoreContext): Promise<string[]> {
  const gitDir = engine.paths.gitDir;
  if (!existsSync(gitDir)) return [];
  const isDir = (p: string) => statSync(path.join(gitDir, p), { throwIfNoEntry: false })?.isDirectory();
  const damaged: string[] = [];
  if (!validHead(path.join(gitDir, "HEAD"))) damaged.push("HEAD");
  for (const dir of ["refs", "objects"]) if (!isDir(dir)) damaged.push(`${dir}/`);
  if (damaged.length === 0) {
    // git reads the config first: one it cannot parse fails every command. The store's own, that
    // is: one of the user's that git cannot read is no damage of the store (doctor says so).
    const probe = await runGit(["rev-parse", "--git-dir"], {
      cwd: engine.paths.dir,
      env: { GIT_DIR: gitDir, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
      okCodes: [0, 128],
    }).catch(() => null);
    if (probe?.code !== 0) damaged.push("config");
  }
  return damaged;
}

/** Writes the frame's missing or damaged parts again; the refs and objects that are there stay. */
export function repairFrame(engine: StoreContext, damaged: string[]): void {
  const gitDir = engine.paths.gitDir;
  for (const part of damaged) {
    if (part === "HEAD") writeFileSync(path.join(gitDir, "HEAD"), HEAD, { mode: 0o600 });
    else if (part === "config") writeFileSync(path.join(gitDir, "config"), STORE_CONFIG, { mode: 0o600 });
    else mkdirSync(path.join(gitDir, part), { recursive: true, mode: 0o700 });
  }
  if (damaged.includes("objects/")) {
    for (const dir of ["objects/info", "objects/pack"])
      mkdirSync(path.join(gitDir, dir), { recursive: true, mode: 0o700 });
  }
  if (damaged.includes("refs/"))
    mkdirSync(path.join(gitDir, "refs", "heads"), { recursive: true, mode: 0o700 });
}
