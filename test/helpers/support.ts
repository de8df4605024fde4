import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterAll } from "vitest";
import { showIn } from "./in-process.js";
import { type Repo, Sandbox } from "./repo.js";

/** One sandbox per test file (each test makes its own uniquely named repository in it). */
export function fileSandbox(): {
  sandbox: Sandbox;
  repo: (files?: Record<string, string>) => Repo;
  /** The same for thousands of files: its objects made as one pack (see `Sandbox.packedRepo`). */
  packedRepo: (files: Record<string, string>) => Repo;
} {
  const sandbox = new Sandbox();
  afterAll(() => sandbox.cleanup());
  let n = 0;
  return {
    sandbox,
    repo: (files?: Record<string, string>) => sandbox.repo(`r${++n}`, files),
    packedRepo: (files: Record<string, string>) => sandbox.packedRepo(`r${++n}`, files),
  };
}

/**
 * Every file under `dir` (recursively; symlinks as their target) → sha1 of its content. Names are
 * read as bytes and keyed as latin1 strings, so names that are not UTF-8 compare exactly.
 */
export function treeDigest(dir: string, skip: (rel: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    const here = rel ? Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(rel, "latin1")]) : Buffer.from(dir);
    for (const name of readdirSync(here, { encoding: "buffer" })) {
      const child = rel ? `${rel}/${name.toString("latin1")}` : name.toString("latin1");
      if (skip(child)) continue;
      const full = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(child, "latin1")]);
      const stat = lstatSync(full);
      if (stat.isDirectory()) walk(child);
      else if (stat.isSymbolicLink())
        out.set(child, `link:${readlinkSync(full, { encoding: "buffer" }).toString("hex")}`);
      else
        out.set(
          child,
          `${stat.mode & 0o111 ? "x" : "-"}${createHash("sha1").update(readFileSync(full)).digest("hex")}`,
        );
    }
  };
  walk("");
  return out;
}

/** The user's `.git` contents as a comparable object. */
export function gitDirDigest(repo: Repo): Record<string, string> {
  return Object.fromEntries(treeDigest(repo.path(".git")));
}

/** The work tree (without `.git`) as a comparable object. */
export function workDigest(dir: string): Record<string, string> {
  return Object.fromEntries(treeDigest(dir, (rel) => rel === ".git"));
}

/** mtime in ns of a file (lstat). */
export function mtimeNs(file: string): bigint {
  return lstatSync(file, { bigint: true }).mtimeNs;
}

/** A snapshot's file list, as `show --json` prints it. */
export async function filesOf(repo: Repo, id: string): Promise<string[]> {
  return (await showIn(repo, id)).files as string[];
}

/** Excluded entry for a path, or undefined. */
export function excludedAt(snap: { excluded: { path: string }[] }, p: string): any {
  return snap.excluded.find((e) => e.path === p);
}
