import { lstatSync } from "node:fs";
import { namesIn } from "../util/small-files.js";

/**
 * Loose objects past which the store is packed before its daily gc. Each takes a block of its own
 * (4 KiB for a tree or a mark of a few hundred bytes): a long day of agent turns made a store grow
 * 18 times the content it held until it was packed. git's own `gc --auto` counts the same way.
 */
const MANY_LOOSE = 2048;
/** Fan-out directories sampled: objects spread evenly over the 256 (their ids are hashes). */
const SAMPLED = ["17", "5a", "a3", "e8"];

/**
 * Whether the store holds more than MANY_LOOSE loose objects of its own, estimated from a few
 * fan-out directories. Files linked from the user's repository (borrowed, more than one link)
 * cost nothing and stay loose after a gc: not counted.
 */
export function manyLooseObjects(objectsDir: string): boolean {
  let own = 0;
  for (const dir of SAMPLED) {
    for (const name of namesIn(`${objectsDir}/${dir}`)) {
      try {
        if (lstatSync(`${objectsDir}/${dir}/${name}`).nlink === 1) own++;
      } catch {
        // packed or pruned meanwhile
      }
    }
  }
  return (own * 256) / SAMPLED.length > MANY_LOOSE;
}
