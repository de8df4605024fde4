// Entry point of the detached build of the private index copy: `node status-cache-worker.js ROOT
// STORE`. It runs the status a snapshot runs, which makes the copy and writes git's untracked
// cache into it, and drops the answer. Its stderr is the store's log.
import type { StoreKind } from "../config.js";
import { readHead } from "../git/repository.js";
import { StoreContext } from "../store/context.js";
import { readUserGitConfig } from "./conversion.js";
import { releaseBuildClaim } from "./status-cache.js";
import { syncExcludes } from "./status-gitdir.js";
import { runStatus } from "./status-run.js";

const [root, store] = process.argv.slice(2);
let storeDir: string | null = null;
try {
  const context = await StoreContext.open(root, { store: store as StoreKind });
  const { location, paths } = context;
  storeDir = paths.dir;
  const [head, userConfig] = await Promise.all([readHead(location), readUserGitConfig(location, paths.dir)]);
  await syncExcludes(location.commonDir!, paths.gitDir);
  await runStatus(context, head, location.worktreeRoot!, location.prefix, userConfig, {
    buildCopy: true,
  });
} catch (error) {
  process.stderr.write(
    `${new Date().toISOString()} status cache build failed: ${(error as Error).message}\n`,
  );
  process.exitCode = 1;
} finally {
  if (storeDir) await releaseBuildClaim(storeDir).catch(() => {});
}
