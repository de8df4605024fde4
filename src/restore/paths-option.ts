import { GhostcommitError } from "../errors.js";

/**
 * Restoring, rewinding or diffing chosen paths only is not supported yet: a caller naming paths
 * is refused, so nothing silently acts on the whole workspace instead of the paths asked for.
 */
export function refuseChosenPaths(paths: string[] | undefined): void {
  if (paths === undefined || paths.length === 0) return;
  throw new GhostcommitError(
    "usage",
    "choosing paths is not supported yet: leave out paths to act on the whole workspace",
    { paths },
  );
}
