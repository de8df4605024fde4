import { existsSync } from "node:fs";
import path from "node:path";
import type { StoreContext } from "../store/context.js";
import { formatBytes } from "../util/format.js";
import type { DoctorCheck } from "./doctor.js";
import { storeBytes } from "./gc.js";

/**
 * Doctor check: a store over `maxStoreBytes`. Retention drops the oldest unprotected snapshots
 * only while that frees disk, so what stays over the cap is held by the snapshots it keeps
 * (protected ones, or content they share), and the user should know the cap is not met.
 */
export const checkStoreSize: DoctorCheck = async (engine: StoreContext) => {
  if (!existsSync(path.join(engine.paths.gitDir, "HEAD"))) return [];
  const size = await storeBytes(engine);
  if (size <= engine.settings.maxStoreBytes) return [];
  return [
    {
      code: "store-over-cap",
      message: `the store holds ${formatBytes(size)}, over maxStoreBytes (${formatBytes(engine.settings.maxStoreBytes)}): \`ghostcommit gc\` drops the oldest unprotected snapshots only while that frees disk, and what stays over the cap is needed by the snapshots it keeps`,
    },
  ];
};
