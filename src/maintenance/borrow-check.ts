import { accessSync, constants } from "node:fs";
import path from "node:path";
import { borrowingUnprotected } from "../store/borrow.js";
import type { StoreContext } from "../store/context.js";
import type { Problem } from "./store-check.js";

/** The shadow store's borrowed objects not protected by links, and why (see borrow.ts). */
export async function checkBorrowing(engine: StoreContext): Promise<Problem[]> {
  if (engine.refs.kind !== "shadow" || engine.location.kind !== "git") return [];
  const unprotected = await borrowingUnprotected(engine.paths.dir);
  if (!unprotected) return [];
  // The repo store writes into the repository's objects: no way out for a user who may not.
  const objects = path.join(engine.location.commonDir ?? engine.location.gitDir ?? "", "objects");
  const repoStore = mayWrite(objects) ? ', or use the repo store ("store": "repo")' : "";
  const [why, fix] =
    unprotected === "cross-device"
      ? [
          "the store is on another file system than the repository",
          `set GHOSTCOMMIT_HOME to a directory on the repository's file system${repoStore}`,
        ]
      : [
          "the repository's object files are another user's, which this user may not hard-link",
          `run as the repository's owner${repoStore}`,
        ];
  return [
    {
      code: "borrowed-unprotected",
      message: `${why}: objects borrowed from it are not protected from its gc (${fix})`,
    },
  ];
}

function mayWrite(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
