import { borrowingUnprotected } from "../store/borrow.js";
import type { StoreContext } from "../store/context.js";
import type { Problem } from "./store-check.js";

/** The shadow store's borrowed objects not protected by links, and why (see borrow.ts). */
export async function checkBorrowing(engine: StoreContext): Promise<Problem[]> {
  if (engine.refs.kind !== "shadow" || engine.location.kind !== "git") return [];
  const unprotected = await borrowingUnprotected(engine.paths.dir);
  if (!unprotected) return [];
  const [why, fix] =
    unprotected === "cross-device"
      ? [
          "the store is on another file system than the repository",
          "set GHOSTCOMMIT_HOME to a directory on the repository's file system, or use the repo store",
        ]
      : [
          "the repository's object files are another user's, which this user may not hard-link",
          "run as the repository's owner, or use the repo store",
        ];
  return [
    {
      code: "borrowed-unprotected",
      message: `${why}: objects borrowed from it are not protected from its gc (${fix}: "store": "repo")`,
    },
  ];
}
