import { spawnSync } from "node:child_process";

/**
 * Watchman's server outlives the watches the tests about it start and remove: when the suite is
 * what started it (none answered before), it is stopped once every test file is done, so a run
 * leaves no daemon behind. Test files run side by side, so none of them can stop it earlier.
 */
export default function setup(): () => void {
  const wasRunning = spawnSync("watchman", ["--no-spawn", "watch-list"], { stdio: "ignore" }).status === 0;
  return () => {
    if (!wasRunning) spawnSync("watchman", ["--no-spawn", "shutdown-server"], { stdio: "ignore" });
  };
}
