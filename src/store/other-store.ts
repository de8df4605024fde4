import type { OptionNames } from "./option-names.js";
import { existsSync } from "node:fs";
import path from "node:path";
import type { StoreKind } from "../config.js";
import { GhostcommitError } from "../errors.js";
import { runGit } from "../git/exec.js";

/**
 * Whether the workspace's other store holds a snapshot whose id starts with `wanted`: a restore's
 * `undo with:` line run after the `store` setting changed (a restore may change
 * `.ghostcommit.json` itself) looks in the wrong store, which should say where the snapshot is.
 */
async function otherStoreHas(
  other: { kind: StoreKind; gitDir: string; prefix: string } | null,
  wanted: string,
): Promise<StoreKind | null> {
  if (!other || !existsSync(path.join(other.gitDir, "HEAD"))) return null;
  const result = await runGit(["for-each-ref", "--format=%(refname)", other.prefix], {
    cwd: other.gitDir,
    env: { GIT_DIR: other.gitDir },
    okCodes: [0, 128],
  });
  const ids = result.stdout.toString("latin1").split("\n");
  return ids.some((ref) => ref.slice(other.prefix.length).startsWith(wanted)) ? other.kind : null;
}

/** No snapshot `given` in this store: said with where it is instead, if the other store has it. */
export async function notFound(
  given: string,
  kind: StoreKind,
  other: { kind: StoreKind; gitDir: string; prefix: string } | null,
  elsewhere: string,
  names: OptionNames,
): Promise<GhostcommitError> {
  const holder = await otherStoreHas(other, given.trim().toLowerCase());
  const where = holder
    ? `'s ${kind} store; it is in its ${holder} store (\`${names.store(holder)}\` reaches it)`
    : "";
  return new GhostcommitError("not-found", `no snapshot ${given} in this workspace${where}${elsewhere}`, {
    id: given,
  });
}

/** A snapshot a command names whose commit a damaged store cannot read: damage, not an unknown id. */
export function unreadableSnapshot(id: string): GhostcommitError {
  return new GhostcommitError(
    "store-damaged",
    `snapshot ${id} cannot be read (its commit is missing or damaged): \`ghostcommit doctor\` names the damage, and \`doctor --repair\` drops it`,
    { oid: id },
  );
}
